#pragma once
// Hands a request's events from the serving loop's thread to the thread that answers its
// HTTP connection: the loop's callback pushes, the connection waits and takes what came.
#include "compute/experiments/serve/CompletionRequest.hpp"

#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>

namespace inferscope::compute::experiments {

class CompletionChannel {
public:
    void push(const CompletionEvent& event) {
        {
            std::lock_guard lock(mutex_);
            events_.push_back(event);
        }
        ready_.notify_all();
    }
    // The events that arrived, after waiting up to `timeout` for at least one.
    std::deque<CompletionEvent> take(std::chrono::milliseconds timeout) {
        std::unique_lock lock(mutex_);
        ready_.wait_for(lock, timeout, [&] { return !events_.empty(); });
        std::deque<CompletionEvent> out;
        out.swap(events_);
        return out;
    }
    // A callback for CompletionRequest::onEvent that keeps the channel alive.
    static CompletionCallback feed(const std::shared_ptr<CompletionChannel>& channel) {
        return [channel](const CompletionEvent& event) { channel->push(event); };
    }

private:
    std::mutex mutex_;
    std::condition_variable ready_;
    std::deque<CompletionEvent> events_;
};

} // namespace inferscope::compute::experiments
