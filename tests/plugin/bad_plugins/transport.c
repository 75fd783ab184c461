/* Transport test plugins, one change each from a valid transport. Built once per variant:
 *  TRANSPORT_GOOD       - nothing changed: a valid SDK 1.1 transport "transport-testnet";
 *  TRANSPORT_NULL_WAIT  - defect: the required function 'wait' is NULL;
 *  TRANSPORT_SMALL      - defect: struct_size stops before 'wait' (an SDK 1.1 table needs up to
 *                         'free_request');
 *  TRANSPORT_KIND_6     - defect: the component's kind is 6, which no SDK 1.x up to the host's knows;
 *  TRANSPORT_DUPLICATE  - a valid plugin "bad-duplicate-transport" whose transport is also called
 *                         "transport-testnet". */
#include "bad_transport.h"

#if defined(TRANSPORT_GOOD)
BAD_TRANSPORT_QUERY("transport-testnet", "test transport: one process", (void)0)
#elif defined(TRANSPORT_DUPLICATE)
BAD_TRANSPORT_QUERY("transport-testnet", "a second transport-testnet", plugin.info.name = "bad-duplicate-transport")
#elif defined(TRANSPORT_NULL_WAIT)
BAD_TRANSPORT_QUERY("bad-transport-null-wait", "transport without wait", plugin.transport.wait = NULL)
#elif defined(TRANSPORT_SMALL)
BAD_TRANSPORT_QUERY("bad-transport-small", "truncated transport table",
                    plugin.transport.struct_size = offsetof(tessera_transport, wait))
#elif defined(TRANSPORT_KIND_6)
BAD_TRANSPORT_QUERY("bad-kind-6", "component of unknown kind 6", plugin.component.kind = 6)
#else
#error "define one TRANSPORT_* variant"
#endif
