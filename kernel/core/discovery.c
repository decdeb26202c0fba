// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Discovery: the method tables themselves, flattened, without the methods
 * the device cannot do (their ->supported says no: they would answer
 * -EOPNOTSUPP).  Nothing here is written by hand, so the answer cannot
 * drift from what the dispatcher accepts.
 */
#include <uabi/core.h>

struct disc_writer {
	struct uabi_discovery *out;
	u32 room;
};

static void emit(struct disc_writer *w, const struct uabi_discovery_entry *e)
{
	if (w->out->returned < w->room)
		w->out->entries[w->out->returned++] = *e;
	w->out->total++;
}

static void emit_object(struct disc_writer *w, const struct uabi_device *dev,
			const struct uabi_object_def *obj)
{
	u16 i, j;

	for (i = 0; i < obj->num_methods; i++) {
		const struct uabi_method_def *m = &obj->methods[i];
		struct uabi_discovery_entry e = {
			.object = obj->id,
			.method = m->id,
			.attr_flags = m->flags,
		};

		if (m->supported && !m->supported(dev))
			continue;
		emit(w, &e);
		for (j = 0; j < m->num_attrs; j++) {
			const struct uabi_attr_spec *a = &m->attrs[j];

			e.attr_id = a->id;
			e.attr_flags = a->flags;
			e.attr_min_len = a->min_len;
			e.attr_max_len = a->max_len;
			emit(w, &e);
		}
	}
}

int uabi_discover(struct uabi_device *dev, struct uabi_discovery *out, u32 len)
{
	struct disc_writer w = { .out = out };
	u16 type;

	if (len < sizeof(*out))
		return -EINVAL;
	w.room = (len - sizeof(*out)) / sizeof(struct uabi_discovery_entry);
	out->total = 0;
	out->returned = 0;
	for (type = 1; type < UABI_OBJ_MAX_CORE; type++)
		emit_object(&w, dev, uabi_object_def(dev, type));
	for (type = 0; type < dev->ops->num_objects; type++)
		emit_object(&w, dev, dev->ops->objects[type]);
	return 0;
}
