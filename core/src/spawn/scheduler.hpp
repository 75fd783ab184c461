// The scheduler of one ts::spawn: a coroutine per rank, run in rank order on the calling thread,
// and what the ranks wait on (collectives met, messages) as tessera::dist asks (comm/rank_programs.hpp).
#pragma once

#include <boost/context/fiber.hpp>
#include <deque>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "comm/rank_programs.hpp"
#include "spawn/rank_scopes.hpp"
#include "spawn/sanitizer_switch.hpp"
#include "tessera/generator.hpp"
#include "tessera/spawn.hpp"
#include "world/world.hpp"

namespace tessera::spawned {

class Scheduler;

// Thrown into a waiting rank once the spawn is failing (another rank threw, or deadlock), to unwind
// its program. Not a std::exception, so that a program's catch of std::exception lets it through.
struct Aborted {};

// What a waiting rank waits for.
class Wait {
 public:
  virtual ~Wait() = default;
  virtual bool done() const = 0;
  // What the rank waits in, for deadlock reports ("recv(src=1, tag=0)"), naming finished peers.
  virtual std::string describe(const Scheduler& scheduler) const = 0;
};

class Scheduler final : public comm::RankPrograms {
 public:
  Scheduler(int size, const std::function<void(int)>& program, const SpawnOptions& options);
  ~Scheduler();
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  // Runs every rank's program to its end; throws RankError, or Error for a deadlock or messages
  // left over.
  void run();

  void meet(comm::Meeting& part) override;
  void send(int src, int dst, int tag, const Tensor& message, const char* op,
            comm::MessageSpace space) override;
  std::shared_ptr<detail::WorkState> irecv(int dst, int src, int tag, const Tensor& target, const char* op,
                                           comm::MessageSpace space) override;

  // From the running rank's program: suspends it until wait->done(). Throws Aborted when the spawn
  // is failing and the wait is not over.
  void block(const std::shared_ptr<Wait>& wait);
  // From the running rank's program: lets the other runnable ranks run first.
  void yield_now();

  int size() const { return static_cast<int>(ranks_.size()); }
  int running_rank() const { return running_; }
  bool finished(int rank) const { return ranks_[static_cast<size_t>(rank)].state == State::finished; }

  struct Gathering;
  struct PostedReceive;

 private:
  enum class State { not_started, runnable, waiting, finished };
  struct Message {
    int src;
    int tag;
    comm::MessageSpace space;
    Tensor data;
  };
  struct Rank {
    boost::context::fiber fiber;  // its suspended program (empty before it starts and after it ends)
    RankScopes scopes;
    Generator generator;
    State state = State::not_started;
    std::shared_ptr<Wait> waiting;
    std::deque<Message> inbox;                          // messages no posted receive took yet, oldest first
    std::deque<std::shared_ptr<PostedReceive>> posted;  // receives waiting for a message, oldest first
    StackBounds stack;  // its coroutine's stack, for AddressSanitizer (sanitizer_switch.hpp)
    void* fake_stack = nullptr;
  };

  void resume(int rank);
  void start(int rank);
  // The body of rank r's coroutine: its program, and what ends it.
  boost::context::fiber run_program(int rank, boost::context::fiber&& scheduler);
  void switch_to_scheduler();
  void fail(int rank, std::exception_ptr error);
  void run_gathering(Gathering& gathering, const observe::ThreadLabels& labels);
  std::string deadlock_report() const;
  void require_nothing_left() const;
  void check_peer(const char* op, int rank, int peer, const char* role) const;
  static void deliver(PostedReceive& receive, const Tensor& data);

  std::function<void(int)> program_;
  SpawnOptions options_;
  std::shared_ptr<world::WorldState> world_;
  std::vector<Rank> ranks_;
  int running_ = -1;
  boost::context::fiber scheduler_;  // where the running rank returns to
  StackBounds scheduler_stack_;      // the calling thread's stack, learnt on the first switch
  void* scheduler_fake_stack_ = nullptr;
  bool aborting_ = false;
  int failed_rank_ = -1;  // the first rank whose program threw
  std::exception_ptr failure_;
  std::string deadlock_;
  // Collectives being met: the whole world's (the default group), and other fibres'.
  std::shared_ptr<Gathering> whole_world_gathering_;
  std::map<std::vector<int>, std::shared_ptr<Gathering>> gatherings_;
  std::shared_ptr<Gathering> to_run_;  // complete: to run on the scheduler's stack
  RankScopes collective_scopes_;       // what a collective runs under: the world bound, no program
};

}  // namespace tessera::spawned
