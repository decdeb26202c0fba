# Debian packages with CPack (docs/install.md):
#   cpack --config <build>/CPackConfig.cmake -G DEB
# makes rdma-uabi_<version>-<release>_<arch>.deb (component runtime) and
# rdma-uabi-dkms_<version>-<release>_all.deb (component kernel).
set(CPACK_PACKAGE_NAME rdma-uabi)
set(CPACK_PACKAGE_VENDOR "rdma-uabi")
set(CPACK_PACKAGE_CONTACT "rdma-uabi maintainers <maintainers@rdma-uabi.invalid>")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_COMPONENTS_ALL runtime kernel)
set(CPACK_DEB_COMPONENT_INSTALL ON)

set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_RELEASE 1)
set(CPACK_DEBIAN_PACKAGE_SECTION net)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${CPACK_PACKAGE_CONTACT}")

# rdma-uabi: programs, libraries, headers, docs.  Its dependencies come
# from the binaries (dpkg-shlibdeps); CPack's postinst and postrm run
# ldconfig for libuabi.so.0 (the drop-in library is off ldconfig's paths).
# The shlibs file names libuabi only: CPack's own would also offer our
# libibverbs.so.1 to packages built against the system's.
set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME rdma-uabi)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SUGGESTS "ibverbs-utils, perftest, rdma-uabi-dkms")
set(CPACK_DEBIAN_RUNTIME_DESCRIPTION
"RDMA without RDMA hardware, and old RDMA programs on a new uAPI
rdma-uabi implements a generic object uAPI for RDMA (create, query,
modify, destroy any object; chains of commands) with a software RDMA
device, served by the uabid daemon (started on demand, no root, no
kernel module) or by the rdma_uabi kernel module (rdma-uabi-dkms).

This package has uabi (uabi run -- PROGRAM runs unmodified ibverbs
programs on it), uabid, a drop-in libibverbs.so.1 kept off the default
library path, and libuabi with its headers, pkg-config and CMake files
for programs written against the new uAPI.")
configure_file(${PROJECT_SOURCE_DIR}/packaging/deb/shlibs.in
  ${PROJECT_BINARY_DIR}/packaging/deb/runtime/shlibs @ONLY)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_CONTROL_EXTRA
  ${PROJECT_BINARY_DIR}/packaging/deb/runtime/shlibs)

# rdma-uabi-dkms: the module's sources for DKMS.
set(CPACK_DEBIAN_KERNEL_PACKAGE_NAME rdma-uabi-dkms)
set(CPACK_DEBIAN_KERNEL_PACKAGE_ARCHITECTURE all)
set(CPACK_DEBIAN_KERNEL_PACKAGE_DEPENDS "dkms")
set(CPACK_DEBIAN_KERNEL_PACKAGE_RECOMMENDS "rdma-uabi")
set(CPACK_DEBIAN_KERNEL_DESCRIPTION
"rdma-uabi kernel module (DKMS sources)
The sources of rdma_uabi.ko, the kernel host of rdma-uabi's object
uAPI (/dev/rdma_uabi), built by DKMS for every kernel whose headers are
installed. With the module loaded, rdma-uabi's programs use it instead
of the uabid daemon.")
foreach(script postinst prerm)
  configure_file(${PROJECT_SOURCE_DIR}/packaging/deb/dkms-${script}.in
    ${PROJECT_BINARY_DIR}/packaging/deb/kernel/${script} @ONLY
    FILE_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ
                     GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
endforeach()
set(CPACK_DEBIAN_KERNEL_PACKAGE_CONTROL_EXTRA
  ${PROJECT_BINARY_DIR}/packaging/deb/kernel/postinst
  ${PROJECT_BINARY_DIR}/packaging/deb/kernel/prerm)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)

include(CPack)
cpack_add_component(runtime DISPLAY_NAME "rdma-uabi")
cpack_add_component(kernel DISPLAY_NAME "rdma-uabi-dkms")
