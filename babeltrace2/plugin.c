// SPDX-License-Identifier: GPL-2.0-only
/*
 * babeltrace2 plugin "magnet": the source component class
 * source.magnet.trace reads MAGNET trace files (docs/BABELTRACE.md).
 *
 *   babeltrace2 --plugin-path=DIR FILE.trace
 *   babeltrace2 --plugin-path=DIR convert FILE.trace \
 *           --component=sink.ctf.fs --params='path="OUT"'
 *
 * Parameters: inputs (array of strings, required): the trace files of one
 * trace, merged in time order (a kernel stream's file and an application
 * stream's, say).  The babeltrace.support-info query recognizes a MAGNET
 * trace file by its first record (a SYSINFO with the byte-order magic), so
 * babeltrace2 finds the component for a file by itself.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mbt.h"

#define CERR(self, fmt, ...)						\
	bt_current_thread_error_append_cause_from_component(		\
		(self), __FILE__, __LINE__, fmt, ##__VA_ARGS__)

static bt_component_class_initialize_method_status
mbt_comp_init(bt_self_component_source *self_src,
	      bt_self_component_source_configuration *config,
	      const bt_value *params, void *data)
{
	bt_self_component *self =
		bt_self_component_source_as_self_component(self_src);
	const bt_value *inputs = NULL, *v;
	const char **paths = NULL;
	struct mbt_comp *mc = NULL;
	uint64_t i, n = 0;
	int ret;

	(void)config;
	(void)data;
	if (params && bt_value_is_map(params))
		inputs = bt_value_map_borrow_entry_value_const(params, "inputs");
	if (!inputs || !bt_value_is_array(inputs) ||
	    !(n = bt_value_array_get_length(inputs))) {
		CERR(self, "missing parameter 'inputs': an array of MAGNET trace files");
		return BT_COMPONENT_CLASS_INITIALIZE_METHOD_STATUS_ERROR;
	}
	paths = calloc(n, sizeof(*paths));
	mc = calloc(1, sizeof(*mc));
	if (!paths || !mc)
		goto nomem;
	for (i = 0; i < n; i++) {
		FILE *f;

		v = bt_value_array_borrow_element_by_index_const(inputs, i);
		if (!bt_value_is_string(v)) {
			CERR(self, "parameter 'inputs': element %llu is not a string",
			     (unsigned long long)i);
			goto fail;
		}
		paths[i] = bt_value_string_get(v);
		f = fopen(paths[i], "r");
		if (!f) {
			CERR(self, "%s: %s", paths[i], strerror(errno));
			goto fail;
		}
		fclose(f);
	}
	ret = magnet_sorted_open(paths, (unsigned int)n, &mc->st);
	if (ret) {
		CERR(self, "%s%s: %s", paths[0], n > 1 ? " ..." : "",
		     strerror(-ret));
		goto fail;
	}
	mc->first_input = strdup(paths[0]);
	if (!mc->first_input)
		goto nomem;
	if (bt_self_component_source_add_output_port(self_src, "out", NULL,
						      NULL))
		goto nomem;
	mc->self = self;
	bt_self_component_set_data(self, mc);
	free(paths);
	return BT_COMPONENT_CLASS_INITIALIZE_METHOD_STATUS_OK;
nomem:
	CERR(self, "out of memory");
fail:
	if (mc && mc->st)
		magnet_sorted_close(mc->st);
	if (mc)
		free(mc->first_input);
	free(mc);
	free(paths);
	return BT_COMPONENT_CLASS_INITIALIZE_METHOD_STATUS_ERROR;
}

static void mbt_comp_fini(bt_self_component_source *self_src)
{
	bt_self_component *self =
		bt_self_component_source_as_self_component(self_src);
	struct mbt_comp *mc = bt_self_component_get_data(self);

	if (!mc)
		return;
	magnet_sorted_close(mc->st);
	free(mc->first_input);
	free(mc);
}

/*
 * 1.0 when @path starts with a SYSINFO record of either byte order (the
 * decoder checks the rest), else 0.
 */
static double support_weight(const char *path)
{
	unsigned char b[MAGNET_REC_HDR_SIZE + 4];
	__u32 endian;
	__u16 size, event;
	FILE *f = fopen(path, "r");
	size_t got;

	if (!f)
		return 0;
	got = fread(b, 1, sizeof(b), f);
	fclose(f);
	if (got < sizeof(b))
		return 0;
	memcpy(&size, b, 2);
	memcpy(&event, b + 2, 2);
	memcpy(&endian, b + MAGNET_REC_HDR_SIZE, 4);
	if (event != MAGNET_EVENT_SYSINFO)
		return 0;
	if (endian == MAGNET_ENDIAN_SWAPPED)
		size = (__u16)(size >> 8 | size << 8);
	else if (endian != MAGNET_ENDIAN_MAGIC)
		return 0;
	return size >= MAGNET_REC_HDR_SIZE + sizeof(struct magnet_sysinfo) &&
	       size <= MAGNET_REC_MAX ? 1.0 : 0;
}

static bt_component_class_query_method_status
mbt_query(bt_self_component_class_source *cls,
	  bt_private_query_executor *exec, const char *object,
	  const bt_value *params, void *data, const bt_value **result)
{
	const bt_value *type, *input;
	bt_value *map;
	double w = 0;

	(void)cls;
	(void)exec;
	(void)data;
	if (strcmp(object, "babeltrace.support-info"))
		return BT_COMPONENT_CLASS_QUERY_METHOD_STATUS_UNKNOWN_OBJECT;
	type = bt_value_map_borrow_entry_value_const(params, "type");
	input = bt_value_map_borrow_entry_value_const(params, "input");
	if (!type || !input || !bt_value_is_string(type) ||
	    !bt_value_is_string(input)) {
		bt_current_thread_error_append_cause_from_component_class(
			bt_self_component_class_source_as_self_component_class(cls),
			__FILE__, __LINE__,
			"babeltrace.support-info: parameters 'type' and 'input' must be strings");
		return BT_COMPONENT_CLASS_QUERY_METHOD_STATUS_ERROR;
	}
	if (!strcmp(bt_value_string_get(type), "file"))
		w = support_weight(bt_value_string_get(input));
	map = bt_value_map_create();
	if (!map)
		return BT_COMPONENT_CLASS_QUERY_METHOD_STATUS_MEMORY_ERROR;
	if (bt_value_map_insert_real_entry(map, "weight", w)) {
		bt_value_put_ref(map);
		return BT_COMPONENT_CLASS_QUERY_METHOD_STATUS_MEMORY_ERROR;
	}
	*result = map;
	return BT_COMPONENT_CLASS_QUERY_METHOD_STATUS_OK;
}

BT_PLUGIN_MODULE();
BT_PLUGIN(magnet);
BT_PLUGIN_DESCRIPTION("MAGNET kernel traces (magnetctl record files)");
BT_PLUGIN_AUTHOR("The MAGNET developers");
BT_PLUGIN_LICENSE("GPL-2.0-only");

BT_PLUGIN_SOURCE_COMPONENT_CLASS(trace, mbt_iter_next);
BT_PLUGIN_SOURCE_COMPONENT_CLASS_DESCRIPTION(trace,
	"Read MAGNET trace files: a stream per CPU, an event class per event ID, LOST records as discarded events.");
BT_PLUGIN_SOURCE_COMPONENT_CLASS_HELP(trace,
	"Parameter inputs: array of MAGNET trace file paths (magnetctl record -o FILE), merged in time order. See MAGNET's docs/BABELTRACE.md.");
BT_PLUGIN_SOURCE_COMPONENT_CLASS_INITIALIZE_METHOD(trace, mbt_comp_init);
BT_PLUGIN_SOURCE_COMPONENT_CLASS_FINALIZE_METHOD(trace, mbt_comp_fini);
BT_PLUGIN_SOURCE_COMPONENT_CLASS_QUERY_METHOD(trace, mbt_query);
BT_PLUGIN_SOURCE_COMPONENT_CLASS_MESSAGE_ITERATOR_CLASS_INITIALIZE_METHOD(trace,
	mbt_iter_init);
BT_PLUGIN_SOURCE_COMPONENT_CLASS_MESSAGE_ITERATOR_CLASS_FINALIZE_METHOD(trace,
	mbt_iter_fini);
