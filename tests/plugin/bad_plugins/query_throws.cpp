// Defect: tessera_plugin_query lets a C++ exception escape across the C ABI, which the SDK forbids
// (status.h). QUERY_THROWS_STD throws an exception class of the plugin's own, derived from
// std::runtime_error (its what() and destructor live in this library); QUERY_THROWS_INT throws an
// int, which is no std::exception at all.
#include <stdexcept>

#include "tessera/sdk/plugin.h"

namespace {

class QueryFailure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace

extern "C" __attribute__((visibility("default"))) tessera_status tessera_plugin_query(
    const tessera_host_info* host, const tessera_plugin_info** info, tessera_error* error) {
  (void)host;
  (void)info;
  (void)error;
#if defined(QUERY_THROWS_STD)
  throw QueryFailure("bad-query-throws: the plugin's configuration could not be read");
#elif defined(QUERY_THROWS_INT)
  throw 42;
#else
#error "define QUERY_THROWS_STD or QUERY_THROWS_INT"
#endif
}
