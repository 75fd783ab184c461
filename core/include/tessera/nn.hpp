// Modules (PyTorch: torch.nn): ts::nn::Module, its parameters and state dicts, the built-in
// modules, nn::functional over Tensor and DTensor values.
#pragma once

#include "tessera/nn/functional.hpp"
#include "tessera/nn/module.hpp"
#include "tessera/nn/modules.hpp"
#include "tessera/nn/parameter.hpp"
#include "tessera/nn/utils.hpp"
#include "tessera/nn/value.hpp"
