#pragma once
// Continuous batching over real arrivals (chapter item 7, served): requests are submitted from
// any thread at any time, wait in a bounded queue, and take a free slot at the next engine
// step; every step runs one batch of prompt chunks and decode tokens (Engine::step), samples
// each request's next token and hands it to the request's callback. A new prompt that agrees
// with a running or recently finished sequence over at least one full KV block forks it
// (Engine::forkSequence, then truncate to the agreeing blocks) and prefills only the rest.
// A cancelled request leaves at the next step and its blocks go back. The loop owns the
// engine while it runs: nothing else may step it.
#include "compute/engine/Engine.hpp"
#include "compute/experiments/serve/CompletionRequest.hpp"
#include "compute/experiments/serve/ServeSnapshot.hpp"
#include "models/tokenizer/Tokenizer.hpp"

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

namespace inferscope::compute::experiments {

struct ServingLoopOptions {
    std::uint32_t slotCount = 8;   // sequences stepped together (--slots)
    std::uint32_t maxWaiting = 64; // queued beyond the free slots; more are rejected
    // Positions one request may hold (prompt + max tokens); 0: the engine's per-sequence limit.
    std::uint32_t contextTokens = 0;
    // Finished sequences kept (with their blocks) for later prompts to fork; the oldest go
    // first when blocks or sequences run short. Capped by the engine's sequence limit.
    std::uint32_t heldSequences = 8;
    std::uint32_t finishedRows = 256; // finished requests kept in the snapshot
    // Each request's tokens independent of the requests stepped beside it (greedy answers equal
    // the request served alone): EngineOptions::batchInvariant while the loop serves.
    bool batchInvariant = false;
};

// submit() when the waiting queue is full (an HTTP 429).
class QueueFullError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};
// submit() after stop() (an HTTP 503).
class LoopStoppedError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

class ServingLoop {
public:
    // Starts the loop's thread. The engine and tokenizer must outlive the loop; the engine's
    // sequences are reset first.
    ServingLoop(Engine& engine, const models::Tokenizer& tokenizer, ServingLoopOptions options);
    ~ServingLoop(); // stop()
    ServingLoop(const ServingLoop&) = delete;
    ServingLoop& operator=(const ServingLoop&) = delete;

    // Thread-safe. Returns the request's id. Throws std::invalid_argument for an empty prompt,
    // max tokens of 0, or prompt + max tokens over contextTokens(); QueueFullError when
    // maxWaiting requests already wait beyond the free slots; LoopStoppedError after stop().
    std::uint64_t submit(CompletionRequest request);
    // Thread-safe; the request ends (FinishReason::Cancelled) at the next step. Unknown or
    // finished ids are ignored.
    void cancel(std::uint64_t id);
    // Ends every request (Cancelled), releases their sequences and joins the thread.
    void stop();

    // The latest published state (thread-safe, never null).
    std::shared_ptr<const ServeSnapshot> snapshot() const;
    // Blocks until a step after this call has been published, or `timeout` passes; returns
    // the snapshot then (tests wait for the loop to go idle with it).
    std::shared_ptr<const ServeSnapshot> waitForIdle(std::chrono::milliseconds timeout) const;
    std::uint32_t contextTokens() const { return contextTokens_; }
    const ServingLoopOptions& options() const { return options_; }

private:
    struct Pending;
    struct Active;
    struct Held;
    void run();
    void admit();
    void startRequest(Pending pending, std::uint32_t slot);
    std::uint32_t forkLongestPrefix(Active& active);
    void stepOnce();
    void finish(Active& active, FinishReason reason, const std::string& error = {});
    void evictHeld(std::uint32_t freeBlocksWanted, std::uint32_t freeSequencesWanted);
    void publish();
    // The snapshot row of a request in a slot, as of `now` (blocks held not counted).
    ServeRequestRow rowOf(const Active& active, std::chrono::steady_clock::time_point now) const;
    // Events are handed to their callbacks after each step's publish (deliver()).
    void post(std::uint64_t id, CompletionCallback callback, CompletionEvent event);
    void deliver();
    std::uint32_t blocksFor(std::uint32_t positions) const;
    double secondsSinceStart() const;

    Engine& engine_;
    bool engineWasBatchInvariant_ = false; // given back at the end
    const models::Tokenizer& tokenizer_;
    ServingLoopOptions options_;
    std::uint32_t contextTokens_ = 0;
    std::vector<std::int32_t> stopTokens_;

    // Shared with submitting threads (mutex_).
    mutable std::mutex mutex_;
    std::condition_variable wake_;
    std::deque<Pending> waiting_;
    std::vector<std::uint64_t> cancels_;
    std::uint64_t nextId_ = 1;
    std::uint64_t rejected_ = 0;
    std::uint32_t running_ = 0; // active requests as of the last publish
    bool stopping_ = false, dirty_ = false;

    // The loop thread's own.
    std::vector<std::unique_ptr<Active>> active_;
    std::deque<Held> held_;
    std::vector<ServeRequestRow> finishedRows_;
    std::vector<std::int64_t> slotHolders_;
    struct Delivery {
        std::uint64_t request = 0;
        CompletionCallback callback;
        CompletionEvent event;
    };
    std::vector<Delivery> outbox_;
    std::uint64_t committedBlocks_ = 0; // worst-case blocks of the active requests
    SequenceId nextSequence_ = 1;
    ServeMetrics metrics_;
    std::chrono::steady_clock::time_point start_;

    mutable std::mutex snapshotMutex_;
    mutable std::condition_variable published_;
    std::shared_ptr<const ServeSnapshot> snapshot_;

    std::thread thread_; // last: starts once everything above exists
};

} // namespace inferscope::compute::experiments
