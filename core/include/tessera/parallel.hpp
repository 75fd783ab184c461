// Parallelizing modules: tensor- and sequence-parallel styles with parallelize_module.
#pragma once

#include "tessera/parallel/fully_shard.hpp"
#include "tessera/parallel/style.hpp"
#include "tessera/parallel/transformer_plan.hpp"
