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

#include "comm/mailbox.hpp"
#include "comm/rank_programs.hpp"
#include "spawn/rank_scopes.hpp"
#include "spawn/sanitizer_switch.hpp"
#include "spawn/stack_arena.hpp"
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
  // `spread`: a world over several processes (null: a simulated world of `size` ranks, all here);
  // the spawn then has a world of its own over the same processes and runs the ranks this
  // process hosts (across_processes.cpp).
  Scheduler(int size, const std::function<void(int)>& program, const SpawnOptions& options,
            const world::WorldState* spread = nullptr);
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

  // From the running rank's program: suspends it until wait.done(); the caller keeps `wait` alive
  // meanwhile. Throws Aborted when the spawn is failing and the wait is not over.
  void block(const Wait& wait);
  // From the running rank's program: lets the other runnable ranks run first.
  void yield_now();

  int size() const { return static_cast<int>(ranks_.size()); }
  int running_rank() const { return running_; }
  bool finished(int rank) const { return ranks_[static_cast<size_t>(rank)].state == State::finished; }
  // Whether this process runs `rank`'s program (every rank, unless the world spans processes).
  bool hosts(int rank) const { return world_->hosts(rank); }
  int process_of(int rank) const { return world_->process_of(rank); }

  struct Gathering;
  struct PostedReceive;
  struct Report;

 private:
  enum class State { not_started, runnable, waiting, finished };
  struct Message {
    int src;
    int tag;
    comm::MessageSpace space;
    Tensor data;
  };
  // What the scheduler touches at every switch comes first: a pass over a thousand ranks reads few
  // lines of each.
  struct Rank {
    boost::context::fiber fiber;  // its suspended program (empty before it starts and after it ends)
    State state = State::not_started;
    const Wait* waiting = nullptr;          // while it waits
    const char* suspended_in = nullptr;     // the frame it switched out from (null before it starts)
    const void* reads_on_waking = nullptr;  // its last collective's tensor, for the cache (may be gone)
    StackBounds stack;  // its coroutine's stack, for AddressSanitizer (sanitizer_switch.hpp)
    void* fake_stack = nullptr;
    RankScopes scopes;
    Generator generator;
    std::deque<Message> inbox;                          // messages no posted receive took yet, oldest first
    std::deque<std::shared_ptr<PostedReceive>> posted;  // receives waiting for a message, oldest first
  };

  // A simulated world: every rank here, run to the end.
  void run_here();
  // One pass over the ranks in rank order, resuming each whose wait is over (or every waiting one
  // while failing); whether any ran.
  bool run_pass();
  void resume(int rank);
  // Asks the cache for the stack frames that rank `rank` resumes into, and the tensor it reads first,
  // while another rank runs.
  void prefetch_stack(int rank) const;
  void start(int rank);
  // The body of rank r's coroutine: its program, and what ends it.
  boost::context::fiber run_program(int rank, boost::context::fiber&& scheduler);
  void switch_to_scheduler();
  void fail(int rank, std::exception_ptr error);
  void run_gathering(Gathering& gathering, const comm::ThreadLabels& labels);
  // Gathering a collective (meetings.cpp): the gathering of part's fibre, opened on its first member;
  // an error on every member that arrived when `part` differs from them; the owner of a complete or
  // failed one, out of the table (the fibre's next collective gathers anew); and one that has run,
  // kept until each member inside has left it.
  Gathering& gathering_for(const comm::Meeting& part);
  void open(std::shared_ptr<Gathering>& slot, const comm::Meeting& part, bool whole);
  [[noreturn]] void mismatch(Gathering& gathering, const comm::Meeting& part);
  std::shared_ptr<Gathering> close(const Gathering& gathering);
  void retire(std::shared_ptr<Gathering> gathering);
  // A member waiting in a gathering, from its arrival until it leaves (woken or unwound): its members
  // point to it without owning it, and the last to leave a retired one ends it.
  class Inside {
   public:
    Inside(Scheduler& scheduler, Gathering& gathering);
    ~Inside();
    Inside(const Inside&) = delete;
    Inside& operator=(const Inside&) = delete;

   private:
    Scheduler& scheduler_;
    Gathering& gathering_;
  };
  static void set_labels(Gathering& gathering, const comm::ThreadLabels& labels);
  std::string deadlock_report() const;
  std::string waits() const;   // "rank 0: recv(src=1, tag=0); rank 1: ..."
  void throw_failure() const;  // the RankError of the hosted rank that failed first, if one did
  // A message for hosted rank `dst` (from a hosted sender or one of another process): to the
  // oldest matching posted receive, or into the inbox.
  void arrive(int dst, Message message);

  // Across processes (across_processes.cpp).
  void run_across();
  // Runs the hosted ranks until none can go on, taking in the messages that arrive meanwhile.
  void run_until_all_wait();
  // Takes in every message from another process that has arrived; whether any did.
  bool take_in_arrivals();
  // One round: every process's report, and what they decide together; false once the spawn ends.
  bool round();
  Report report() const;
  std::vector<Report> exchange(const Report& mine);
  void run_agreed(const std::vector<Report>& reports);
  void await_messages_sent_here(const std::vector<Report>& reports);
  void end_streams();
  void require_nothing_left() const;
  std::string leftovers() const;  // messages never received, receives never matched; empty: none
  void check_peer(const char* op, int rank, int peer, const char* role) const;
  static void deliver(PostedReceive& receive, const Tensor& data);

  std::function<void(int)> program_;
  SpawnOptions options_;
  ThreadScopesAt here_;  // the scopes of the thread that runs the spawn (rank_scopes.hpp)
  std::shared_ptr<world::WorldState> world_;
  StackArena stacks_;  // outlives the ranks' coroutines, which live on it
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
  comm::AssembledMembers whole_world_assembled_;  // what its runs assembled last
  std::map<std::vector<int>, std::shared_ptr<Gathering>> gatherings_;
  std::shared_ptr<Gathering> to_run_;            // complete: to run on the scheduler's stack
  std::vector<std::shared_ptr<Gathering>> met_;  // run (or failed), with members still inside
  RankScopes collective_scopes_;                 // what a collective runs under: the world bound, no program

  // Across processes. A collective whose members live in several processes waits, once its hosted
  // members have all arrived, until every process agrees to run it (round()); `ready_` holds them,
  // `fibre_calls_` counts each fibre's collectives (the n-th on a fibre is the same call on every
  // process of its members). Messages from other processes arrive through one stream per pair of
  // a remote and a hosted rank; every process counts what it sent to and took in from each.
  bool spread_ = false;
  // Made ready by the running rank (ready_ owns it): labelled on its return.
  Gathering* just_ready_ = nullptr;
  std::vector<std::shared_ptr<Gathering>> ready_;
  std::map<std::vector<int>, uint64_t> fibre_calls_;
  uint64_t agreed_calls_ = 0;  // collectives across processes run so far, numbered alike everywhere
  std::vector<std::unique_ptr<comm::RemoteStream>> streams_;
  std::vector<uint64_t> sent_to_, taken_from_;  // messages, per process
  uint64_t rounds_ = 0;
  std::vector<Report> last_reports_;
  std::string remote_failure_;  // what another process's rank threw, when it failed first
  int remote_failed_rank_ = -1;
  std::string agreed_error_;  // a mismatch or deadlock every process found in the same round
};

// Inline: a rank returns through every frame between its program and the switch once per wait, and
// each return after a switch of stacks is one the processor cannot predict.
inline void Scheduler::switch_to_scheduler() {
  Rank& rank = ranks_[static_cast<size_t>(running_)];
  rank.suspended_in = static_cast<const char*>(__builtin_frame_address(0));
  start_switch(&rank.fake_stack, scheduler_stack_);
  scheduler_ = std::move(scheduler_).resume();
  finish_switch(rank.fake_stack, &scheduler_stack_);
}

inline void Scheduler::block(const Wait& wait) {
  Rank& rank = ranks_[static_cast<size_t>(running_)];
  while (!wait.done()) {
    if (aborting_) throw Aborted{};
    rank.state = State::waiting;
    rank.waiting = &wait;
    switch_to_scheduler();
    rank.waiting = nullptr;
  }
}

// What one process tells the others in a round.
struct Scheduler::Report {
  struct Ready {  // a collective whose hosted members have all arrived
    std::vector<int> fibre;
    uint64_t ordinal = 0;
    uint64_t call = 0;  // digest of what the call is (every member must agree on it)
    int rank = -1;      // its first hosted member, and that member's call in words
    std::string text;
  };
  bool finished = false;  // every hosted rank's program ended
  int failed_rank = -1;   // a hosted rank that threw, and what
  std::string failure;
  std::vector<Ready> ready;
  std::vector<uint64_t> sent_to, taken_from;  // messages, per process
  std::string waits;                          // what each waiting hosted rank waits in
  std::string leftovers;  // once finished: messages never received, receives never matched
};

}  // namespace tessera::spawned
