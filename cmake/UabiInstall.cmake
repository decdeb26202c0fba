# What `cmake --install` puts where (docs/install.md).  Two components:
#   runtime  the drop-in libibverbs.so.1, libuabi and its headers, uabid,
#            uabi, pkg-config and CMake files, docs, man pages
#            (Debian package rdma-uabi)
#   kernel   the module's sources, Kbuild and dkms.conf
#            (Debian package rdma-uabi-dkms)
include(CMakePackageConfigHelpers)

# The module's source tree, where DKMS looks for it under /usr.
set(UABI_INSTALL_KSRCDIR src/rdma-uabi-${PROJECT_VERSION})
set(UABI_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/rdma-uabi)

# Programs: uabi for users, uabid (started on demand by the library, or by
# an administrator with --shared) with the system's daemons.
install(TARGETS uabi RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT runtime)
install(TARGETS uabid RUNTIME DESTINATION ${CMAKE_INSTALL_SBINDIR} COMPONENT runtime)

# The drop-in library and the raw-write interposer, in their own directory
# (only the runtime name: nothing is ever linked against them).
if(TARGET uabi_verbs)
  install(TARGETS uabi_verbs uabi_legacy_preload
    LIBRARY DESTINATION ${UABI_INSTALL_VERBSDIR} COMPONENT runtime NAMELINK_SKIP)
endif()
# The object core as a module, loaded by the client library only for
# UABI_BACKEND=inproc (beside the drop-in, where it looks first).
if(TARGET uabi_inproc)
  install(TARGETS uabi_inproc
    LIBRARY DESTINATION ${UABI_INSTALL_VERBSDIR} COMPONENT runtime)
endif()
# The umad shim `uabi run` preloads beside it (docs/fsview.md).
if(TARGET uabi_umad)
  install(TARGETS uabi_umad
    LIBRARY DESTINATION ${UABI_INSTALL_VERBSDIR} COMPONENT runtime)
endif()
# The ucma shim it preloads for librdmacm (docs/cm.md).
if(TARGET uabi_rdmacm)
  install(TARGETS uabi_rdmacm
    LIBRARY DESTINATION ${UABI_INSTALL_VERBSDIR} COMPONENT runtime)
endif()

# libuabi for new-uAPI programs: the library, its headers (<uabi/*.hpp> and
# the uAPI's <rdma/uabi*.h>), and the files that find them.
if(TARGET uabi_shared)
  install(TARGETS uabi_shared EXPORT rdma-uabi-targets
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT runtime
    NAMELINK_COMPONENT runtime)
  install(EXPORT rdma-uabi-targets NAMESPACE rdma-uabi::
    DESTINATION ${UABI_INSTALL_CMAKEDIR} COMPONENT runtime)
endif()
foreach(h client message transport transport_daemon)
  install(FILES ${PROJECT_SOURCE_DIR}/newapi/include/uabi/${h}.hpp
    DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/uabi COMPONENT runtime)
endforeach()
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/uapi/rdma
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT runtime
  FILES_MATCHING PATTERN "uabi*.h")

configure_package_config_file(${PROJECT_SOURCE_DIR}/packaging/rdma-uabi-config.cmake.in
  ${PROJECT_BINARY_DIR}/packaging/rdma-uabi-config.cmake
  INSTALL_DESTINATION ${UABI_INSTALL_CMAKEDIR})
# 0.x: a minor version may break the API.
write_basic_package_version_file(
  ${PROJECT_BINARY_DIR}/packaging/rdma-uabi-config-version.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/packaging/rdma-uabi-config.cmake
  ${PROJECT_BINARY_DIR}/packaging/rdma-uabi-config-version.cmake
  DESTINATION ${UABI_INSTALL_CMAKEDIR} COMPONENT runtime)

# pkg-config: the prefix from the .pc file's own place, so a moved prefix
# still answers its own paths.
file(RELATIVE_PATH UABI_PC_PREFIX_FROM_PCDIR
  ${CMAKE_INSTALL_FULL_LIBDIR}/pkgconfig ${CMAKE_INSTALL_PREFIX})
string(REGEX REPLACE "/$" "" UABI_PC_PREFIX_FROM_PCDIR "${UABI_PC_PREFIX_FROM_PCDIR}")
configure_file(${PROJECT_SOURCE_DIR}/packaging/rdma-uabi.pc.in
  ${PROJECT_BINARY_DIR}/packaging/rdma-uabi.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/packaging/rdma-uabi.pc
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT runtime)

# Documentation: the README and docs/ keep their relative links.
install(FILES ${PROJECT_SOURCE_DIR}/README.md
  DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT runtime)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/
  DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs COMPONENT runtime
  PATTERN "man" EXCLUDE)

# Man pages (troff, docs/man/*.in with the version filled in), compressed
# as Debian installs them (man reads both).
set(uabi_man_gz "")
foreach(page uabi.1 uabid.8)
  string(REGEX REPLACE ".*\\.([0-9])$" "\\1" section ${page})
  set(src ${PROJECT_BINARY_DIR}/man/${page})
  configure_file(${PROJECT_SOURCE_DIR}/docs/man/${page}.in ${src} @ONLY)
  set(gz ${src}.gz)
  add_custom_command(OUTPUT ${gz}
    COMMAND gzip -9 -n -c ${src} > ${gz}
    DEPENDS ${src} VERBATIM)
  list(APPEND uabi_man_gz ${gz})
  install(FILES ${gz} DESTINATION ${CMAKE_INSTALL_MANDIR}/man${section} COMPONENT runtime)
endforeach()
add_custom_target(uabi_man ALL DEPENDS ${uabi_man_gz})

# The kernel module's sources as Kbuild needs them (kernel/ without the
# userspace host, and the uAPI at ../include/uapi), with dkms.conf.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/kernel/
  DESTINATION ${UABI_INSTALL_KSRCDIR}/kernel COMPONENT kernel
  FILES_MATCHING PATTERN "*.c" PATTERN "*.h" PATTERN "Kbuild"
  REGEX "/os/user$" EXCLUDE)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/uapi/
  DESTINATION ${UABI_INSTALL_KSRCDIR}/include/uapi COMPONENT kernel
  FILES_MATCHING PATTERN "*.h")
configure_file(${PROJECT_SOURCE_DIR}/packaging/dkms.conf.in
  ${PROJECT_BINARY_DIR}/packaging/dkms.conf @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/packaging/dkms.conf
  DESTINATION ${UABI_INSTALL_KSRCDIR} COMPONENT kernel)

# The out-of-tree example (pkg-config Makefile and CMakeLists.txt), to copy.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/newapi/examples/out-of-tree/
  DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples/out-of-tree COMPONENT runtime)
