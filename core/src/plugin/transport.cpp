#include "plugin/transport.hpp"

#include <cstddef>

namespace tessera::plugin {

bool Transport::has_allgather() const {
  // A table built against a smaller struct ends before the field: reading it would read past the table.
  return table_->struct_size >= offsetof(tessera_transport, allgather) + sizeof(void*) &&
         table_->allgather != nullptr;
}

bool Transport::has_abort() const {
  return table_->struct_size >= offsetof(tessera_transport, abort) + sizeof(void*) && table_->abort != nullptr;
}

}  // namespace tessera::plugin
