/* A collective algorithm whose schedule has one defect, chosen at build time by BAD_DEFECT (see
 * tests/plugin/CMakeLists.txt): it loads, and only verification of its schedule rejects it. */
#include "bad_collective.h"

BAD_COLLECTIVE_QUERY(BAD_NAME, "all_reduce with one defect in its schedule", BAD_DEFECT)
