// Point-to-point in a spawn. A send is eager: the message (a copy) goes to the oldest receive the
// destination posted for that source and tag, or waits in the destination's inbox. A posted receive
// takes the oldest matching message of the inbox, or waits for one. Matching is by (source, tag),
// in posting order, as MPI matches, and by space: the gradients that the differentiable send/recv
// pair passes back never meet a user's messages.
#include <fmt/format.h>

#include "spawn/scheduler.hpp"
#include "tensor/tensor_impl.hpp"
#include "tessera/autograd.hpp"
#include "tessera/errors.hpp"

namespace tessera::spawned {

struct Scheduler::PostedReceive final : Wait, detail::WorkState, std::enable_shared_from_this<PostedReceive> {
  Scheduler* scheduler = nullptr;  // null once the spawn has ended
  int dst = 0;
  int src = 0;
  int tag = 0;
  comm::MessageSpace space = comm::MessageSpace::user;
  Tensor target;
  const char* op = "recv";
  bool complete = false;
  std::exception_ptr error;

  std::string call() const {
    return fmt::format("{}(src={}, {}tag={})", op, src,
                       space == comm::MessageSpace::gradient ? "gradient of " : "", tag);
  }
  std::string what() const { return fmt::format("{} on rank {}", call(), dst); }

  bool done() const override { return complete; }
  std::string describe(const Scheduler& s) const override {
    std::string text = call();
    if (!s.hosts(src)) text += fmt::format(" from process {}", s.process_of(src));
    if (s.finished(src)) text += fmt::format(", and rank {} has finished", src);
    return text;
  }

  bool completed() const override { return complete; }
  void wait() override {
    if (!complete) {
      if (scheduler == nullptr || scheduler_here() != scheduler || scheduler->running_rank() != dst)
        throw Error(fmt::format(
            "wait on {}: only rank {}'s program can wait for its receive, while its ts::spawn runs", what(),
            dst));
      scheduler->block(*this);
    }
    if (error) std::rethrow_exception(error);
  }
};

// Here, where a posted receive is a complete type.
Scheduler::~Scheduler() {
  // Receives still posted may be held by Works beyond the spawn: they no longer reach it.
  for (Rank& rank : ranks_)
    for (const std::shared_ptr<PostedReceive>& receive : rank.posted) receive->scheduler = nullptr;
}

void Scheduler::check_peer(const char* op, int rank, int peer, const char* role) const {
  if (peer < 0 || peer >= size())
    throw Error(fmt::format("{} on rank {}: {} {} is outside the spawned world of {} rank(s) (0..{})", op,
                            rank, role, peer, size(), size() - 1));
  if (peer == rank) throw Error(fmt::format("{} on rank {}: {} is the rank itself", op, rank, role));
}

void Scheduler::deliver(PostedReceive& receive, const Tensor& data) {
  receive.complete = true;
  try {
    if (data.dtype() != receive.target.dtype() || data.sizes() != receive.target.sizes())
      throw Error(fmt::format("{}: the message from rank {} is {} {} but the receiving tensor is {} {}",
                              receive.what(), receive.src, dtype_name(data.dtype()), shape_text(data.sizes()),
                              dtype_name(receive.target.dtype()), shape_text(receive.target.sizes())));
    const NoGradGuard not_recorded;
    Tensor(receive.target).copy_(data);
  } catch (...) {
    receive.error = std::current_exception();
  }
  receive.target = Tensor();  // written: the receive no longer holds the tensor
}

void Scheduler::send(int src, int dst, int tag, const Tensor& message, const char* op,
                     comm::MessageSpace space) {
  if (aborting_) throw Aborted{};
  check_peer(op, src, dst, "the destination");
  Tensor copy;
  {
    const NoGradGuard not_recorded;
    copy = message.detach().contiguous().clone();  // eager: later writes to `message` do not reach it
  }
  if (!hosts(dst)) {
    // To another process: eager too (the link holds the send until the peer takes it).
    comm::post_remote(*world_, src, dst, tag, copy,
                      space == comm::MessageSpace::gradient ? comm::MessageKind::gradient
                                                            : comm::MessageKind::point_to_point);
    ++sent_to_[static_cast<size_t>(process_of(dst))];
    return;
  }
  arrive(dst, {src, tag, space, std::move(copy)});
}

void Scheduler::arrive(int dst, Message message) {
  Rank& to = ranks_[static_cast<size_t>(dst)];
  for (auto it = to.posted.begin(); it != to.posted.end(); ++it)
    if ((*it)->src == message.src && (*it)->tag == message.tag && (*it)->space == message.space) {
      const std::shared_ptr<PostedReceive> receive = *it;
      to.posted.erase(it);
      deliver(*receive, message.data);
      return;
    }
  to.inbox.push_back(std::move(message));
}

std::shared_ptr<detail::WorkState> Scheduler::irecv(int dst, int src, int tag, const Tensor& target,
                                                    const char* op, comm::MessageSpace space) {
  if (aborting_) throw Aborted{};
  check_peer(op, dst, src, "the source");
  auto receive = std::make_shared<PostedReceive>();
  receive->scheduler = this;
  receive->dst = dst;
  receive->src = src;
  receive->tag = tag;
  receive->space = space;
  receive->target = target;
  receive->op = op;
  Rank& self = ranks_[static_cast<size_t>(dst)];
  for (auto it = self.inbox.begin(); it != self.inbox.end(); ++it)
    if (it->src == src && it->tag == tag && it->space == space) {
      const Tensor data = std::move(it->data);
      self.inbox.erase(it);
      deliver(*receive, data);
      return receive;
    }
  self.posted.push_back(receive);
  return receive;
}

void Scheduler::require_nothing_left() const {
  if (std::string left = leftovers(); !left.empty())
    throw Error(fmt::format("ts::spawn: every program ended, but {}", left));
}

std::string Scheduler::leftovers() const {
  std::string left;
  for (int r = 0; r < size(); ++r) {
    const Rank& rank = ranks_[static_cast<size_t>(r)];
    for (const Message& m : rank.inbox)
      left += fmt::format("{}a {}message from rank {} to rank {} with tag {} was never received",
                          left.empty() ? "" : "; ",
                          m.space == comm::MessageSpace::gradient ? "gradient " : "", m.src, r, m.tag);
    for (const std::shared_ptr<PostedReceive>& receive : rank.posted)
      left += fmt::format("{}{} never got a message", left.empty() ? "" : "; ", receive->what());
  }
  return left;
}

}  // namespace tessera::spawned
