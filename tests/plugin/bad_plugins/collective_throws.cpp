// Defect: a collective algorithm (a valid direct all_reduce otherwise, bad_collective.h) lets a C++
// exception escape across the C ABI, which the SDK forbids (status.h).
//  COLL_BUILD_THROWS_STD - build throws an exception class of the plugin's own (std::runtime_error)
//  COLL_BUILD_THROWS_INT - build throws an int, no std::exception at all
//  COLL_CHECK_THROWS     - check throws (std::runtime_error's own class)
#include <stdexcept>

extern "C" {
#include "bad_collective.h"
}

namespace {

#if defined(COLL_CHECK_THROWS)
tessera_status throwing_check(void*, const tessera_collective_request*, tessera_error*) {
  throw std::runtime_error("the check's table of group sizes is missing");
}
#else
class BuildFailure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

tessera_status throwing_build(void*, const tessera_collective_request* request,
                              const tessera_schedule_builder*, tessera_error*) {
#if defined(COLL_BUILD_THROWS_INT)
  (void)request;
  throw 7;
#else
  throw BuildFailure("no schedule for " + std::to_string(request->group_size) + " ranks");
#endif
}
#endif

}  // namespace

#if defined(COLL_BUILD_THROWS_STD)
#define NAME "bad-coll-build-throws"
#define BREAK plugin.algorithm.build = throwing_build
#elif defined(COLL_BUILD_THROWS_INT)
#define NAME "bad-coll-build-throws-int"
#define BREAK plugin.algorithm.build = throwing_build
#elif defined(COLL_CHECK_THROWS)
#define NAME "bad-coll-check-throws"
#define BREAK plugin.algorithm.check = throwing_check
#else
#error "define COLL_BUILD_THROWS_STD, COLL_BUILD_THROWS_INT or COLL_CHECK_THROWS"
#endif

extern "C" {
ONE_COMPONENT_QUERY(bad_collective,
                    bad_collective_valid(&plugin, NAME, "all_reduce whose plugin code throws",
                                         BAD_COLLECTIVE_NONE),
                    BREAK)
}
