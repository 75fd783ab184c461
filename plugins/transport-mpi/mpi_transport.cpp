#include "mpi_transport.hpp"

#include <climits>
#include <cstdlib>
#include <string>

#include "mpi_error.hpp"
#include "polling.hpp"

namespace tessera::transport_mpi {
namespace {

// How long free_request gives a pending send that MPI cannot cancel (message.cpp) to complete.
// free_request on a pending send happens when the host abandons a collective after an error; a
// peer that is alive takes the message within this, a dead one never does.
constexpr int64_t kSendGraceMs = 1000;

// The least MPI_TAG_UB the MPI standard allows, and the least transport.h accepts.
constexpr int64_t kLeastTagUpperBound = 32767;
// Freed messages kept for reuse: more than the requests of any one collective call in flight.
constexpr size_t kSpareMessages = 64;

std::string to_text(int64_t value) { return std::to_string(value); }

}  // namespace

sdk::TransportWorld MpiTransport::init(const tessera_transport_config& config) {
  if (comm_ != MPI_COMM_NULL) fail(TESSERA_INVALID_ARGUMENT, "init: called twice without finalize");
  world_timeout_ms_ = config.struct_size >= offsetof(tessera_transport_config, timeout_ms) + sizeof(int64_t)
                          ? config.timeout_ms
                          : 0;

  int finalized = 0;
  check_mpi(MPI_Finalized(&finalized), "init: MPI_Finalized");
  if (finalized)
    fail(TESSERA_INTERNAL,
         "init: MPI has already been finalised in this process, and MPI cannot be initialised again");
  int initialized = 0;
  check_mpi(MPI_Initialized(&initialized), "init: MPI_Initialized");

  int provided = MPI_THREAD_SINGLE;
  if (initialized) {
    // The program initialised MPI itself: use it as it is, and leave MPI_Finalize to the program.
    check_mpi(MPI_Query_thread(&provided), "init: MPI_Query_thread");
    if (provided < MPI_THREAD_SERIALIZED)
      fail(TESSERA_INVALID_ARGUMENT,
           "init: the program initialised MPI with " + thread_level_name(provided) +
               ", expected at least MPI_THREAD_SERIALIZED (Tessera calls MPI from several threads, one at "
               "a time): initialise it with MPI_Init_thread(..., MPI_THREAD_SERIALIZED, ...)");
  } else {
    // No MPI_Init in the program: the plugin initialises MPI (argc/argv are optional since MPI-2).
    // An MPI_Init_thread failure aborts under Open MPI's default error handler; nothing to catch.
    check_mpi(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided), "init: MPI_Init_thread");
    initialised_mpi_ = true;
    if (provided < MPI_THREAD_SERIALIZED) {
      MPI_Finalize();
      initialised_mpi_ = false;
      fail(TESSERA_INTERNAL,
           "init: MPI_Init_thread provided " + thread_level_name(provided) +
               ", expected at least MPI_THREAD_SERIALIZED (this MPI library lacks thread support)");
    }
  }
  return join_world();
}

sdk::TransportWorld MpiTransport::join_world() {
  try {
    check_mpi(MPI_Comm_dup(MPI_COMM_WORLD, &comm_), "init: MPI_Comm_dup(MPI_COMM_WORLD)");
    // Errors on the private communicator come back as codes (then as statuses with MPI's text)
    // instead of aborting the program, which is MPI's default.
    check_mpi(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN), "init: MPI_Comm_set_errhandler");
    check_mpi(MPI_Comm_rank(comm_, &index_), "init: MPI_Comm_rank");
    check_mpi(MPI_Comm_size(comm_, &count_), "init: MPI_Comm_size");
    // MPI_TAG_UB is a predefined attribute of MPI_COMM_WORLD (a dup need not carry it).
    void* value = nullptr;
    int found = 0;
    check_mpi(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &value, &found),
              "init: MPI_Comm_get_attr(MPI_TAG_UB)");
    max_tag_ = found && value != nullptr ? *static_cast<int*>(value) : kLeastTagUpperBound;
    if (max_tag_ < kLeastTagUpperBound)
      max_tag_ = kLeastTagUpperBound;  // an MPI below the standard's minimum
  } catch (...) {
    if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
    comm_ = MPI_COMM_NULL;
    if (initialised_mpi_) MPI_Finalize();
    initialised_mpi_ = false;
    throw;
  }
  sdk::TransportWorld world{index_, count_, max_tag_};
  // Chunks of any length are cut into parts MPI's int count can carry (message.hpp): no limit to
  // report. Host memory only (transport.h: device_memory 0).
  world.max_message_bytes = 0;
  world.latency = latency_ ? latency_() : 0.0;
  world.bandwidth = bandwidth_ ? bandwidth_() : 0.0;
  return world;
}

void MpiTransport::abort(int32_t exit_code) {
  // On the world's communicator, not the private one: the job is what ends (Open MPI kills every
  // process of it, stalled ones included).
  MPI_Abort(MPI_COMM_WORLD, exit_code);
  std::_Exit(exit_code);  // MPI_Abort does not return; should it, the process still ends here
}

void MpiTransport::finalize() {
  require_initialised("finalize");
  const size_t left = settle_abandoned(world_timeout_ms_);
  // Released with their storage: the transport object itself is never destroyed (plugin.cpp).
  std::vector<std::unique_ptr<Message>>().swap(spare_);
  const int free_code = MPI_Comm_free(&comm_);
  comm_ = MPI_COMM_NULL;
  int finalize_code = MPI_SUCCESS;
  if (initialised_mpi_) {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) finalize_code = MPI_Finalize();
    initialised_mpi_ = false;
  }
  check_mpi(free_code, "finalize: MPI_Comm_free");
  check_mpi(finalize_code, "finalize: MPI_Finalize");
  if (left > 0)
    fail(TESSERA_INTERNAL, "finalize: " + std::to_string(left) +
                               " allgather(s) that timed out earlier were still pending after " +
                               to_text(world_timeout_ms_) + " ms; not every process took part in them");
}

size_t MpiTransport::settle_abandoned(int64_t grace_ms) {
  if (abandoned_.empty()) return 0;
  poll_until(grace_ms, [&] {
    std::erase_if(abandoned_, [](const std::unique_ptr<Allgather>& gather) {
      try {
        return gather->test();
      } catch (...) {
        return true;  // failed: complete, nothing of it is pending any more
      }
    });
    return abandoned_.empty();
  });
  // Still pending: MPI may write into their buffers at any time, so they are leaked, never freed.
  const size_t left = abandoned_.size();
  for (auto& gather : abandoned_) static_cast<void>(gather.release());
  std::vector<std::unique_ptr<Allgather>>().swap(abandoned_);
  return left;
}

void MpiTransport::require_initialised(const char* call) const {
  if (comm_ == MPI_COMM_NULL)
    fail(TESSERA_INVALID_ARGUMENT, std::string(call) + ": the transport is not initialised");
}

tessera_transport_request MpiTransport::isend(const DLTensor& chunk, int32_t peer, int64_t tag) {
  return post(Direction::send, chunk, peer, tag);
}

tessera_transport_request MpiTransport::irecv(const DLTensor& chunk, int32_t peer, int64_t tag) {
  return post(Direction::receive, chunk, peer, tag);
}

tessera_transport_request MpiTransport::post(Direction direction, const DLTensor& chunk, int32_t peer,
                                             int64_t tag) {
  const char* call = direction == Direction::send ? "isend" : "irecv";
  require_initialised(call);
  if (peer < 0 || peer >= count_)
    fail(TESSERA_INVALID_ARGUMENT, std::string(call) + ": peer " + to_text(peer) +
                                       " is out of range, expected 0 .. " + to_text(count_ - 1) + " (" +
                                       to_text(count_) + " processes)");
  if (peer == index_)
    fail(TESSERA_INVALID_ARGUMENT, std::string(call) + ": peer " + to_text(peer) +
                                       " is this process; expected another process (messages within a "
                                       "process do not go through the transport)");
  if (tag < 0 || tag > max_tag_)
    fail(TESSERA_INVALID_ARGUMENT, std::string(call) + ": tag " + to_text(tag) +
                                       " is out of range, expected 0 .. " + to_text(max_tag_) +
                                       " (MPI_TAG_UB)");
  const ChunkBytes bytes = chunk_bytes(chunk, call);
  std::unique_ptr<Message> message;
  if (spare_.empty()) {
    message =
        std::make_unique<Message>(direction, comm_, peer, static_cast<int>(tag), bytes, max_part_bytes_);
  } else {
    message = std::move(spare_.back());
    spare_.pop_back();
    message->reset(direction, comm_, peer, static_cast<int>(tag), bytes, max_part_bytes_);
  }
  message->post();
  return to_handle(message.release());
}

Message& MpiTransport::message(tessera_transport_request request, const char* call) const {
  if (request == nullptr) fail(TESSERA_INVALID_ARGUMENT, std::string(call) + ": request is NULL");
  return *from_handle(request);
}

bool MpiTransport::test(tessera_transport_request request) { return message(request, "test").test(); }

bool MpiTransport::wait(tessera_transport_request request, int64_t timeout_ms) {
  Message& pending = message(request, "wait");
  if (poll_until(timeout_ms, [&] { return pending.test(); })) return true;
  fail(TESSERA_TIMEOUT, "wait: the " + pending.describe() + " did not complete within " +
                            to_text(timeout_ms) + " ms; it is still pending");
}

void MpiTransport::free_request(tessera_transport_request request) {
  // Owned from here on: the Message is deleted whatever release() reports.
  std::unique_ptr<Message> owned(&message(request, "free_request"));
  if (std::string problem = owned->release(kSendGraceMs); !problem.empty())
    fail(TESSERA_INTERNAL, "free_request: " + problem);
  if (spare_.size() < kSpareMessages) spare_.push_back(std::move(owned));
}

bool MpiTransport::allgather(const void* send, size_t bytes, void* recv, int64_t timeout_ms) {
  require_initialised("allgather");
  if (timeout_ms < 0)
    fail(TESSERA_INVALID_ARGUMENT, "allgather: negative timeout " + to_text(timeout_ms) + " ms");
  // MPI counts are int; the contract speaks of a few kilobytes.
  if (bytes > static_cast<size_t>(INT_MAX) / static_cast<size_t>(count_))
    fail(TESSERA_INVALID_ARGUMENT, "allgather: " + std::to_string(bytes) +
                                       " bytes per process is too many, expected at most " +
                                       to_text(INT_MAX / count_) + " for " + to_text(count_) + " processes");
  if (bytes > 0 && (send == nullptr || recv == nullptr))
    fail(TESSERA_INVALID_ARGUMENT, "allgather: send or recv is NULL for " + std::to_string(bytes) + " bytes");
  auto gather = std::make_unique<Allgather>(comm_, send, bytes, count_);
  if (poll_until(timeout_ms, [&] { return gather->test(); })) {
    gather->copy_out(recv);
    return true;
  }
  // A collective cannot be cancelled: keep it, with its own buffers, until finalize. Collectives on
  // one communicator match in call order, so a later allgather still pairs with the right one.
  abandoned_.push_back(std::move(gather));
  fail(TESSERA_TIMEOUT, "allgather of " + std::to_string(bytes) +
                            " bytes per process did not complete within " + to_text(timeout_ms) +
                            " ms: not every one of the " + to_text(count_) + " processes took part in time");
}

}  // namespace tessera::transport_mpi
