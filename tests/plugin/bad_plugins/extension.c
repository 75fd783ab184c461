/* `extension` pointers across SDK minors. Before 1.3 the SDK said they must be NULL; from 1.3 on
 * they are typed extension chains (tessera_extension), which the host walks once at load.
 * Built for SDK 1.2, with an extension set (to a valid, readable struct, so only the host's refusal
 * keeps it from being followed) - rejected by the pre-1.3 rule:
 *  EXTENSION_INFO      - in tessera_plugin_info
 *  EXTENSION_COMPONENT - in the tessera_component
 *  EXTENSION_BACKEND   - in the tessera_backend table
 * Built for this SDK (1.3), with a malformed chain - rejected:
 *  EXTENSION_SHORT_ENTRY - the backend's chain: entry #1's struct_size is smaller than the header
 *  EXTENSION_CYCLE       - the component's chain: two entries linking to each other, endlessly
 * Built for this SDK, with an `extension` field that does not lead to a chain - rejected, and the
 * host reads nothing through the pointer that could crash it:
 *  EXTENSION_NOT_A_CHAIN - the backend's field points at text (its first bytes read as a size far too large)
 *  EXTENSION_WILD        - the component's field holds an address no memory is mapped at
 *  EXTENSION_WILD_NEXT   - the info's chain: a valid entry whose `next` leads nowhere
 *  EXTENSION_MISALIGNED  - the backend's field points one byte into a valid entry
 *  EXTENSION_SDK_TYPE    - the backend's chain: an entry of type 1, in the SDK's range, which no minor
 * defines Built for this SDK, with a well-formed chain of types the host does not know - loads:
 *  EXTENSION_GOOD_CHAIN  - chains in the info, the component and the backend table
 * Built for a newer minor, with an entry of an SDK type this host does not know - loads:
 *  EXTENSION_FUTURE_TYPE - a newer minor may define type 1; the host skips it */
#include "bad_plugin.h"

/* An extension of a type a newer host might know: the header and a payload. */
struct unknown_extension {
  tessera_extension header;
  int64_t payload;
};

#define UNKNOWN_EXTENSION(TYPE, NEXT) \
  { {sizeof(struct unknown_extension), (TYPE), (NEXT)}, 42 }

/* An address at the very start of the address space, where nothing is ever mapped; aligned. */
#define UNMAPPED_ADDRESS ((const tessera_extension*)(uintptr_t)64)

#if defined(EXTENSION_INFO) || defined(EXTENSION_COMPONENT) || defined(EXTENSION_BACKEND)
static struct unknown_extension extension = UNKNOWN_EXTENSION(1, NULL);
#endif

/* An address at the very start of the address space, where nothing is ever mapped; aligned. */
#define UNMAPPED_ADDRESS ((const tessera_extension*)(uintptr_t)64)

#if defined(EXTENSION_INFO)
BAD_PLUGIN_QUERY("bad-extension-info", "SDK 1.2, extension set in the plugin info",
                 (plugin.info.sdk_minor = 2, plugin.info.extension = &extension))
#elif defined(EXTENSION_COMPONENT)
BAD_PLUGIN_QUERY("bad-extension-component", "SDK 1.2, extension set in the component",
                 (plugin.info.sdk_minor = 2, plugin.component.extension = &extension))
#elif defined(EXTENSION_BACKEND)
BAD_PLUGIN_QUERY("bad-extension-backend", "SDK 1.2, extension set in the backend table",
                 (plugin.info.sdk_minor = 2, plugin.backend.extension = &extension))
#elif defined(EXTENSION_SHORT_ENTRY)
/* Entry #1 claims 8 bytes: only its struct_size exists, not the type and next of the header. */
static size_t short_entry = 8;
static struct unknown_extension first =
    UNKNOWN_EXTENSION(TESSERA_EXTENSION_USER, (const tessera_extension*)&short_entry);
BAD_PLUGIN_QUERY("bad-extension-short-entry", "an extension chain entry smaller than its header",
                 plugin.backend.extension = &first)
#elif defined(EXTENSION_CYCLE)
static struct unknown_extension ping;
static struct unknown_extension pong = UNKNOWN_EXTENSION(TESSERA_EXTENSION_USER + 1, &ping.header);
static struct unknown_extension ping = UNKNOWN_EXTENSION(TESSERA_EXTENSION_USER, &pong.header);
BAD_PLUGIN_QUERY("bad-extension-cycle", "an extension chain whose entries link to each other",
                 plugin.component.extension = &ping)
#elif defined(EXTENSION_NOT_A_CHAIN)
static _Alignas(8) const char text[] = "this is a message, not an extension chain";
BAD_PLUGIN_QUERY("bad-extension-not-a-chain", "an extension field pointing at text",
                 plugin.backend.extension = (void*)text)
#elif defined(EXTENSION_WILD)
BAD_PLUGIN_QUERY("bad-extension-wild", "an extension field holding an unmapped address",
                 plugin.component.extension = (void*)UNMAPPED_ADDRESS)
#elif defined(EXTENSION_WILD_NEXT)
static struct unknown_extension first = UNKNOWN_EXTENSION(TESSERA_EXTENSION_USER, UNMAPPED_ADDRESS);
BAD_PLUGIN_QUERY("bad-extension-wild-next", "an extension chain whose second link leads nowhere",
                 plugin.info.extension = &first)
#elif defined(EXTENSION_MISALIGNED)
static struct unknown_extension entry = UNKNOWN_EXTENSION(TESSERA_EXTENSION_USER, NULL);
BAD_PLUGIN_QUERY("bad-extension-misaligned", "an extension field pointing one byte into an entry",
                 plugin.backend.extension = (char*)&entry + 1)
#elif defined(EXTENSION_SDK_TYPE)
static struct unknown_extension sdk_type = UNKNOWN_EXTENSION(1, NULL);
static struct unknown_extension first = UNKNOWN_EXTENSION(TESSERA_EXTENSION_USER, &sdk_type.header);
BAD_PLUGIN_QUERY("bad-extension-sdk-type", "an extension of a type in the SDK's range that no minor defines",
                 plugin.backend.extension = &first)
#elif defined(EXTENSION_FUTURE_TYPE)
static struct unknown_extension future = UNKNOWN_EXTENSION(1, NULL);
BAD_PLUGIN_QUERY("extension-future-type", "built for SDK 1.99, with an extension of SDK type 1",
                 (plugin.info.sdk_minor = 99, plugin.backend.extension = &future))
#elif defined(EXTENSION_GOOD_CHAIN)
static struct unknown_extension third = UNKNOWN_EXTENSION(TESSERA_EXTENSION_USER + 2, NULL);
static struct unknown_extension second = UNKNOWN_EXTENSION(TESSERA_EXTENSION_USER + 1, &third.header);
static struct unknown_extension first = UNKNOWN_EXTENSION(TESSERA_EXTENSION_USER, &second.header);
/* The header alone is a valid entry too (struct_size == sizeof(tessera_extension)). */
static tessera_extension bare = {sizeof(tessera_extension), TESSERA_EXTENSION_USER + 7, NULL};
BAD_PLUGIN_QUERY("extension-chain", "well-formed extension chains of types the host does not know",
                 (plugin.info.extension = &first, plugin.component.extension = &bare,
                  plugin.backend.extension = &second))
#else
#error "define one of the EXTENSION_* variants listed at the top"
#endif
