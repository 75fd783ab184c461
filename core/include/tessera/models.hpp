// Reference models built from ts::nn modules.
#pragma once

#include "tessera/models/transformer.hpp"
#include "tessera/models/transformer_stage.hpp"
