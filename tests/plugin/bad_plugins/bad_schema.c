/* Parameter schemas (SDK 1.5) with one defect each, on an otherwise valid backend plugin that takes
 * parameters. The host must reject each at load, naming the parameter and the defect:
 *  SCHEMA_DUPLICATE        - "size" declared twice
 *  SCHEMA_DEFAULT_OUTSIDE  - an integer 1..8 whose default is "16"
 *  SCHEMA_UNKNOWN_TYPE     - type 9
 *  SCHEMA_EMPTY_RANGE      - integer_min 5 > integer_max 2
 *  SCHEMA_NAN_BOUND        - a real whose real_max is NaN
 *  SCHEMA_NO_CHOICES       - a choice with num_choices 0
 *  SCHEMA_CHOICE_TWICE     - a choice listing "a" twice
 *  SCHEMA_NO_HELP          - no help text
 *  SCHEMA_BAD_NAME         - the name "chunk size" (a space)
 *  SCHEMA_NO_SET_PARAMETER - parameters declared, but no set_parameter to receive them */
#include <math.h>
#include <stdint.h>

#include "bad_plugin.h"

static tessera_status accept_parameter(void* context, const char* key, const char* value,
                                       tessera_error* error) {
  (void)context;
  (void)key;
  (void)value;
  (void)error;
  return TESSERA_OK;
}

static const char* const choices[] = {"a", "b", "a"};

static tessera_parameter first = {sizeof(tessera_parameter),
                                  NULL,
                                  "size",
                                  TESSERA_PARAMETER_INTEGER,
                                  "4",
                                  "How big.",
                                  1,
                                  8,
                                  0.0,
                                  0.0,
                                  0,
                                  NULL};
static tessera_parameter second = {sizeof(tessera_parameter),
                                   NULL,
                                   "mode",
                                   TESSERA_PARAMETER_CHOICE,
                                   "a",
                                   "Which mode.",
                                   0,
                                   0,
                                   0.0,
                                   0.0,
                                   2,
                                   choices};
static const tessera_parameter* declared[] = {&first, &second};

static void declare(tessera_plugin_info* info) {
  info->set_parameter = accept_parameter;
  info->num_parameters = 2;
  info->parameters = declared;
#if defined(SCHEMA_DUPLICATE)
  second = first;
#elif defined(SCHEMA_DEFAULT_OUTSIDE)
  first.default_value = "16";
#elif defined(SCHEMA_UNKNOWN_TYPE)
  second.type = 9;
#elif defined(SCHEMA_EMPTY_RANGE)
  first.integer_min = 5;
  first.integer_max = 2;
#elif defined(SCHEMA_NAN_BOUND)
  second.type = TESSERA_PARAMETER_REAL;
  second.default_value = "0.5";
  second.real_max = NAN;
#elif defined(SCHEMA_NO_CHOICES)
  second.num_choices = 0;
#elif defined(SCHEMA_CHOICE_TWICE)
  second.num_choices = 3;
#elif defined(SCHEMA_NO_HELP)
  first.help = NULL;
#elif defined(SCHEMA_BAD_NAME)
  second.name = "chunk size";
#elif defined(SCHEMA_NO_SET_PARAMETER)
  info->set_parameter = NULL;
#else
#error "define one SCHEMA_* variant"
#endif
}

BAD_PLUGIN_QUERY("bad-schema", "a parameter schema with one defect", declare(&plugin.info))
