// Reference models built from ts::nn modules.
#pragma once

#include "tessera/models/transformer.hpp"
