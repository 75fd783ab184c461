/* Transport test plugins, one change each from a valid transport. Built once per variant:
 *  TRANSPORT_GOOD       - nothing changed: a valid SDK 1.1 transport "transport-testnet";
 *  TRANSPORT_NULL_WAIT  - defect: the required function 'wait' is NULL;
 *  TRANSPORT_SMALL      - defect: struct_size stops before 'wait' (an SDK 1.1 table needs up to
 *                         'free_request');
 *  TRANSPORT_KIND_6     - defect: the component's kind is 6, which no SDK 1.x up to the host's knows;
 *  TRANSPORT_DUPLICATE  - a valid plugin "bad-duplicate-transport" whose transport is also called
 *                         "transport-testnet";
 * and one defect each in the SDK 1.5 link properties init reports (transport.h), which the host
 * must refuse at init naming the field and the value:
 *  TRANSPORT_NAN_LATENCY        - latency NaN;
 *  TRANSPORT_NEGATIVE_BANDWIDTH - bandwidth -1e9;
 *  TRANSPORT_INFINITE_LATENCY   - latency +infinity;
 *  TRANSPORT_SMALL_MAX_MESSAGE  - max_message_bytes 1024, less than the host's own messages need;
 *  TRANSPORT_DEVICE_MEMORY_2    - device_memory 2 (a flag: 0 or 1). */
#include <math.h>

#include "bad_transport.h"

/* An init that reports a valid world of one process, then one property set to VALUE (written only
 * when the host's struct holds it, as transport.h asks). */
#define PROPERTY_INIT(FIELD, VALUE)                                                          \
  static tessera_status property_init(void* context, const tessera_transport_config* config, \
                                      tessera_transport_info* info, tessera_error* error) {  \
    const tessera_status status = bad_transport_init(context, config, info, error);          \
    if (info->struct_size >= offsetof(tessera_transport_info, FIELD) + sizeof(info->FIELD))  \
      info->FIELD = VALUE;                                                                   \
    return status;                                                                           \
  }

#if defined(TRANSPORT_GOOD)
BAD_TRANSPORT_QUERY("transport-testnet", "test transport: one process", (void)0)
#elif defined(TRANSPORT_DUPLICATE)
BAD_TRANSPORT_QUERY("transport-testnet", "a second transport-testnet",
                    plugin.info.name = "bad-duplicate-transport")
#elif defined(TRANSPORT_NULL_WAIT)
BAD_TRANSPORT_QUERY("bad-transport-null-wait", "transport without wait", plugin.transport.wait = NULL)
#elif defined(TRANSPORT_SMALL)
BAD_TRANSPORT_QUERY("bad-transport-small", "truncated transport table",
                    plugin.transport.struct_size = offsetof(tessera_transport, wait))
#elif defined(TRANSPORT_KIND_6)
BAD_TRANSPORT_QUERY("bad-kind-6", "component of unknown kind 6", plugin.component.kind = 6)
#elif defined(TRANSPORT_NAN_LATENCY)
PROPERTY_INIT(latency, NAN)
BAD_TRANSPORT_QUERY("bad-transport-nan-latency", "latency NaN", plugin.transport.init = property_init)
#elif defined(TRANSPORT_NEGATIVE_BANDWIDTH)
PROPERTY_INIT(bandwidth, -1e9)
BAD_TRANSPORT_QUERY("bad-transport-negative-bandwidth", "bandwidth -1e9",
                    plugin.transport.init = property_init)
#elif defined(TRANSPORT_INFINITE_LATENCY)
PROPERTY_INIT(latency, INFINITY)
BAD_TRANSPORT_QUERY("bad-transport-infinite-latency", "latency inf", plugin.transport.init = property_init)
#elif defined(TRANSPORT_SMALL_MAX_MESSAGE)
PROPERTY_INIT(max_message_bytes, 1024)
BAD_TRANSPORT_QUERY("bad-transport-small-max-message", "max_message_bytes 1024",
                    plugin.transport.init = property_init)
#elif defined(TRANSPORT_DEVICE_MEMORY_2)
PROPERTY_INIT(device_memory, 2)
BAD_TRANSPORT_QUERY("bad-transport-device-memory-2", "device_memory 2", plugin.transport.init = property_init)
#else
#error "define one TRANSPORT_* variant"
#endif
