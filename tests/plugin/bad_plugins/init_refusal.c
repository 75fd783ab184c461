/* Plugins whose init refuses the host, for the host's rendering of status codes and messages:
 *  REFUSAL_LONG     - status TESSERA_NOT_FOUND and a 700-byte message, cut as snprintf cuts it, to 511 bytes;
 *  REFUSAL_NO_NUL   - status TESSERA_UNAVAILABLE and all 512 message bytes filled, no terminating NUL;
 *  REFUSAL_CODE_42  - status 42, which no SDK minor defines, and a short message. */
#include "bad_plugin.h"

static tessera_status refuse(void* context, const tessera_host_info* host, tessera_error* error) {
  (void)context;
  (void)host;
#if defined(REFUSAL_LONG)
  char text[700];
  memset(text, 'x', sizeof(text) - 2);
  text[0] = '<';
  text[sizeof(text) - 2] = '>';
  text[sizeof(text) - 1] = '\0';
  /* What snprintf(message, capacity, "%s", text) does, without the compiler's truncation warning. */
  memcpy(error->message, text, sizeof(error->message) - 1);
  error->message[sizeof(error->message) - 1] = '\0';
  return TESSERA_NOT_FOUND;
#elif defined(REFUSAL_NO_NUL)
  memset(error->message, 'y', sizeof(error->message));
  return TESSERA_UNAVAILABLE;
#elif defined(REFUSAL_CODE_42)
  snprintf(error->message, sizeof(error->message), "a code of its own");
  return 42;
#else
#error "define one REFUSAL_* variant"
#endif
}

BAD_PLUGIN_QUERY("bad-init-refusal", "init refuses with a status to render", plugin.info.init = refuse)
