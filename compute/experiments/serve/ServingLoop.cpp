#include "compute/experiments/serve/ServingLoop.hpp"

#include "compute/experiments/serve/StopStrings.hpp"
#include "models/reference/Sampler.hpp"
#include "models/tokenizer/TextStream.hpp"

#include <algorithm>
#include <random>

namespace inferscope::compute::experiments {

namespace {
using Clock = std::chrono::steady_clock;

double seconds(Clock::duration d) {
    return std::chrono::duration<double>(d).count();
}

models::SamplingOptions samplingOf(const CompletionRequest& request, std::uint64_t id) {
    models::SamplingOptions sampling;
    sampling.greedy = request.temperature <= 0.0f;
    sampling.temperature = request.temperature;
    sampling.topK = 0;
    sampling.topP = request.topP;
    // Without a seed each request draws its own; with one, the same request samples the same.
    sampling.seed = request.seed ? *request.seed : std::random_device{}() ^ (id << 32);
    return sampling;
}
} // namespace

std::string finishReasonName(FinishReason reason) {
    switch (reason) {
    case FinishReason::None:
        return "";
    case FinishReason::Stop:
        return "stop";
    case FinishReason::Length:
        return "length";
    case FinishReason::Cancelled:
        return "cancelled";
    case FinishReason::Error:
        return "error";
    }
    return "?";
}

std::string serveRequestStateName(ServeRequestState state) {
    switch (state) {
    case ServeRequestState::Waiting:
        return "waiting";
    case ServeRequestState::Prefilling:
        return "prefilling";
    case ServeRequestState::Decoding:
        return "decoding";
    case ServeRequestState::Finished:
        return "finished";
    }
    return "?";
}

struct ServingLoop::Pending {
    std::uint64_t id = 0;
    CompletionRequest request;
    Clock::time_point arrival;
};

// A request holding a slot. `tokens` are the prompt and the tokens sampled so far; the engine
// holds the first `fed` of them.
struct ServingLoop::Active {
    std::uint64_t id = 0;
    SequenceId sequence = 0;
    std::uint32_t slot = 0;
    CompletionRequest request;
    std::vector<std::int32_t> tokens;
    std::uint32_t fed = 0;
    std::uint32_t generated = 0;
    std::uint32_t shared = 0;
    std::uint32_t committedBlocks = 0;
    bool cancelled = false;
    models::Sampler sampler;
    models::TextStream text;
    StopStrings stops;
    Clock::time_point arrival, admitted, firstToken, lastToken;

    Active(Pending pending, const models::Tokenizer& tokenizer)
        : id(pending.id), request(std::move(pending.request)), tokens(request.prompt),
          sampler(samplingOf(request, pending.id)), text(tokenizer), stops(request.stop),
          arrival(pending.arrival), admitted(Clock::now()) {}
};

// A finished sequence kept for prefix sharing: the tokens its KV blocks hold.
struct ServingLoop::Held {
    SequenceId sequence = 0;
    std::uint64_t request = 0;
    std::vector<std::int32_t> tokens;
};

ServingLoop::ServingLoop(Engine& engine, const models::Tokenizer& tokenizer,
                         ServingLoopOptions options)
    : engine_(engine), tokenizer_(tokenizer), options_(options),
      stopTokens_(tokenizer.stopTokens()), start_(Clock::now()) {
    if (options_.slotCount == 0) throw std::invalid_argument("the serving loop needs a slot");
    const auto& cache = engine_.kvCache();
    if (options_.slotCount > cache.maxSequences())
        throw std::invalid_argument("--slots " + std::to_string(options_.slotCount) +
                                    " is over the engine's " +
                                    std::to_string(cache.maxSequences()) + " sequences");
    options_.heldSequences =
        std::min(options_.heldSequences, cache.maxSequences() - options_.slotCount);
    const std::uint32_t limit =
        std::min(cache.maxPositionsPerSequence(), cache.capacityBlocks() * cache.blockSize());
    contextTokens_ = options_.contextTokens ? std::min(options_.contextTokens, limit) : limit;
    engine_.reset();
    engineWasBatchInvariant_ = engine_.batchInvariant();
    engine_.setBatchInvariant(options_.batchInvariant);
    slotHolders_.assign(options_.slotCount, -1);
    metrics_.slotCount = options_.slotCount;
    publish();
    thread_ = std::thread([this] { run(); });
}

ServingLoop::~ServingLoop() {
    stop();
    engine_.setBatchInvariant(engineWasBatchInvariant_);
}

std::uint32_t ServingLoop::blocksFor(std::uint32_t positions) const {
    const auto block = engine_.kvCache().blockSize();
    return (positions + block - 1) / block;
}

double ServingLoop::secondsSinceStart() const {
    return seconds(Clock::now() - start_);
}

std::uint64_t ServingLoop::submit(CompletionRequest request) {
    if (request.prompt.empty()) throw std::invalid_argument("the prompt is empty");
    if (request.maxTokens == 0) throw std::invalid_argument("max_tokens must be at least 1");
    const std::uint64_t total = std::uint64_t(request.prompt.size()) + request.maxTokens;
    if (total > contextTokens_)
        throw std::invalid_argument(
            "the prompt's " + std::to_string(request.prompt.size()) + " tokens and max_tokens " +
            std::to_string(request.maxTokens) + " need " + std::to_string(total) +
            " positions; a request may hold " + std::to_string(contextTokens_));
    std::lock_guard lock(mutex_);
    if (stopping_) throw LoopStoppedError("the server is shutting down");
    const std::uint32_t freeSlots = options_.slotCount - std::min(options_.slotCount, running_);
    if (waiting_.size() >= std::size_t(options_.maxWaiting) + freeSlots) {
        ++rejected_;
        dirty_ = true;
        wake_.notify_one();
        throw QueueFullError(std::to_string(waiting_.size()) +
                             " requests are already waiting (--max-waiting); try again later");
    }
    const std::uint64_t id = nextId_++;
    waiting_.push_back({id, std::move(request), Clock::now()});
    wake_.notify_one();
    return id;
}

void ServingLoop::cancel(std::uint64_t id) {
    std::lock_guard lock(mutex_);
    cancels_.push_back(id);
    wake_.notify_one();
}

void ServingLoop::stop() {
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
        wake_.notify_one();
    }
    if (thread_.joinable()) thread_.join();
}

std::shared_ptr<const ServeSnapshot> ServingLoop::snapshot() const {
    std::lock_guard lock(snapshotMutex_);
    return snapshot_;
}

std::shared_ptr<const ServeSnapshot>
ServingLoop::waitForIdle(std::chrono::milliseconds timeout) const {
    std::unique_lock lock(snapshotMutex_);
    published_.wait_for(lock, timeout, [&] {
        return snapshot_->metrics.running == 0 && snapshot_->metrics.waiting == 0;
    });
    return snapshot_;
}

void ServingLoop::run() {
    for (;;) {
        std::vector<Pending> arrivals;
        std::vector<std::uint64_t> cancels;
        bool stopping = false;
        {
            std::unique_lock lock(mutex_);
            wake_.wait(lock, [&] {
                return stopping_ || dirty_ || !cancels_.empty() || !active_.empty() ||
                       (!waiting_.empty() && active_.size() < options_.slotCount);
            });
            dirty_ = false;
            stopping = stopping_;
            cancels.swap(cancels_);
            metrics_.requestsRejected = rejected_;
            // Cancelled before a slot: they never reach the engine.
            for (auto it = waiting_.begin(); it != waiting_.end();)
                if (stopping ||
                    std::find(cancels.begin(), cancels.end(), it->id) != cancels.end()) {
                    arrivals.push_back(std::move(*it));
                    it = waiting_.erase(it);
                } else {
                    ++it;
                }
        }
        for (auto& cancelled : arrivals) {
            CompletionEvent event;
            event.finish = FinishReason::Cancelled;
            event.usage.promptTokens = std::uint32_t(cancelled.request.prompt.size());
            ++metrics_.finishedCancelled;
            post(cancelled.id, cancelled.request.onEvent, std::move(event));
        }
        arrivals.clear();
        for (auto& active : active_)
            if (stopping || std::find(cancels.begin(), cancels.end(), active->id) != cancels.end())
                active->cancelled = true;
        std::erase_if(active_, [&](const std::unique_ptr<Active>& active) {
            if (!active->cancelled) return false;
            finish(*active, FinishReason::Cancelled);
            return true;
        });
        if (stopping) break;
        admit();
        if (!active_.empty()) {
            try {
                stepOnce();
            } catch (const std::exception& error) {
                // A failed step ends every request in it; the engine starts over clean.
                for (auto& active : active_) finish(*active, FinishReason::Error, error.what());
                active_.clear();
                held_.clear();
                engine_.reset();
            }
        }
        publish();
        deliver();
    }
    for (const auto& held : held_) engine_.release(held.sequence);
    held_.clear();
    publish();
    deliver();
}

void ServingLoop::post(std::uint64_t id, CompletionCallback callback, CompletionEvent event) {
    if (callback) outbox_.push_back({id, std::move(callback), std::move(event)});
}

// After the step's snapshot is published, so that a client that saw its last token and then
// reads /metrics finds the step counted.
void ServingLoop::deliver() {
    for (auto& delivery : outbox_) {
        try {
            delivery.callback(delivery.event);
        } catch (...) {
            // A listener that throws is gone: its request ends at the next step.
            if (delivery.event.finish == FinishReason::None) cancel(delivery.request);
        }
    }
    outbox_.clear();
}

// Moves waiting requests into free slots while the KV cache can hold their worst case.
void ServingLoop::admit() {
    for (;;) {
        if (active_.size() >= options_.slotCount) return;
        Pending next;
        {
            std::lock_guard lock(mutex_);
            if (waiting_.empty()) return;
            const auto need = blocksFor(std::uint32_t(waiting_.front().request.prompt.size() +
                                                      waiting_.front().request.maxTokens));
            if (committedBlocks_ + need > engine_.kvCache().capacityBlocks()) return;
            next = std::move(waiting_.front());
            waiting_.pop_front();
        }
        std::uint32_t slot = 0;
        while (slotHolders_[slot] >= 0) ++slot;
        startRequest(std::move(next), slot);
    }
}

void ServingLoop::startRequest(Pending pending, std::uint32_t slot) {
    auto active = std::make_unique<Active>(std::move(pending), tokenizer_);
    active->slot = slot;
    active->sequence = nextSequence_++;
    active->committedBlocks =
        blocksFor(std::uint32_t(active->tokens.size() + active->request.maxTokens));
    committedBlocks_ += active->committedBlocks;
    slotHolders_[slot] = std::int64_t(active->id);
    // Room for one more sequence in the engine: the oldest held sequences go.
    evictHeld(0, 1);
    active->shared = forkLongestPrefix(*active);
    active->fed = active->shared;
    metrics_.promptTokens += active->tokens.size();
    metrics_.sharedPromptTokens += active->shared;
    ++metrics_.requestsAdmitted;
    metrics_.queueTime.observe(seconds(active->admitted - active->arrival));
    active_.push_back(std::move(active));
}

// The running or held sequence whose written tokens agree longest with the new prompt; its
// agreeing full blocks are forked into the new sequence. At least the prompt's last token is
// left to prefill (its logits pick the first output token).
std::uint32_t ServingLoop::forkLongestPrefix(Active& target) {
    const auto block = engine_.kvCache().blockSize();
    const auto& prompt = target.tokens;
    SequenceId best = 0;
    std::uint32_t bestShare = 0;
    auto consider = [&](SequenceId source, const std::vector<std::int32_t>& tokens,
                        std::uint32_t written) {
        const std::size_t limit = std::min<std::size_t>(written, prompt.size() - 1);
        std::size_t agree = 0;
        while (agree < limit && tokens[agree] == prompt[agree]) ++agree;
        const auto share = std::uint32_t(agree / block * block);
        if (share > bestShare) {
            bestShare = share;
            best = source;
        }
    };
    for (const auto& active : active_)
        if (active->fed > 0) consider(active->sequence, active->tokens, active->fed);
    for (const auto& held : held_)
        consider(held.sequence, held.tokens, std::uint32_t(held.tokens.size()));
    if (bestShare == 0) return 0;
    const auto forked = engine_.forkSequence(best, target.sequence);
    if (forked > bestShare) engine_.truncate(target.sequence, bestShare);
    return std::min(forked, bestShare);
}

// Releases the oldest held sequences until the cache has `freeBlocksWanted` free blocks and
// room for `freeSequencesWanted` more sequences (or none is held).
void ServingLoop::evictHeld(std::uint32_t freeBlocksWanted, std::uint32_t freeSequencesWanted) {
    const auto& cache = engine_.kvCache();
    auto sequences = [&] { return std::uint32_t(active_.size() + held_.size()); };
    while (!held_.empty() &&
           (cache.freeBlocks() < freeBlocksWanted ||
            sequences() + freeSequencesWanted > options_.slotCount + options_.heldSequences)) {
        engine_.release(held_.front().sequence);
        held_.pop_front();
    }
}

void ServingLoop::stepOnce() {
    std::vector<SequenceInput> batch;
    std::uint32_t newBlocks = 0;
    for (const auto& active : active_) {
        SequenceInput input;
        input.sequence = active->sequence;
        input.tokens.assign(active->tokens.begin() + active->fed, active->tokens.end());
        const auto length = std::uint32_t(active->tokens.size());
        const auto has = engine_.kvCache().contains(active->sequence)
                             ? std::uint32_t(engine_.kvCache().blockTable(active->sequence).size())
                             : 0u;
        newBlocks += blocksFor(length) > has ? blocksFor(length) - has : 0;
        batch.push_back(std::move(input));
    }
    evictHeld(newBlocks, 0);
    const auto result = engine_.step(batch);
    ++metrics_.steps;
    const auto now = Clock::now();
    std::vector<std::unique_ptr<Active>> still;
    for (std::size_t i = 0; i < active_.size(); ++i) {
        auto& active = *active_[i];
        const auto& output = result.sequences.at(i);
        active.fed = std::uint32_t(active.tokens.size());
        const std::size_t rows = output.argmax.size();
        const std::size_t vocab = rows ? output.logits.size() / rows : 0;
        std::int32_t token = 0;
        if (active.sampler.options().greedy || vocab == 0) {
            token = output.argmax.back();
        } else {
            const std::span<const float> last(output.logits.data() + (rows - 1) * vocab, vocab);
            token = active.sampler.sample(last, active.tokens);
        }
        active.tokens.push_back(token);
        ++active.generated;
        ++metrics_.generatedTokens;
        if (active.generated == 1) {
            active.firstToken = now;
            metrics_.timeToFirstToken.observe(seconds(now - active.arrival));
        } else {
            metrics_.interTokenLatency.observe(seconds(now - active.lastToken));
        }
        active.lastToken = now;
        CompletionEvent event;
        event.tokens = {token};
        FinishReason reason = FinishReason::None;
        const bool endToken =
            !active.request.ignoreEos &&
            std::find(stopTokens_.begin(), stopTokens_.end(), token) != stopTokens_.end();
        if (endToken) {
            reason = FinishReason::Stop;
        } else {
            event.text = active.stops.add(active.text.add(token));
            if (active.stops.stopped()) reason = FinishReason::Stop;
        }
        if (reason == FinishReason::None && active.generated >= active.request.maxTokens)
            reason = FinishReason::Length;
        if (reason == FinishReason::Length) event.text += active.stops.flush();
        if (reason == FinishReason::None) {
            post(active.id, active.request.onEvent, std::move(event));
            still.push_back(std::move(active_[i]));
            continue;
        }
        // The last event carries the last text and the finish together.
        event.finish = reason;
        event.usage = {std::uint32_t(active.request.prompt.size()), active.generated,
                       active.shared};
        post(active.id, std::move(active.request.onEvent), std::move(event));
        active.request.onEvent = nullptr; // told already
        finish(active, reason);
    }
    active_ = std::move(still);
}

// Ends a request: its callback hears the reason (unless it heard it already), its slot frees,
// and its sequence is released or held for prefix sharing.
void ServingLoop::finish(Active& active, FinishReason reason, const std::string& error) {
    const auto now = Clock::now();
    if (active.request.onEvent) {
        CompletionEvent event;
        event.finish = reason;
        event.error = error;
        event.usage = {std::uint32_t(active.request.prompt.size()), active.generated,
                       active.shared};
        post(active.id, std::move(active.request.onEvent), std::move(event));
        active.request.onEvent = nullptr;
    }
    switch (reason) {
    case FinishReason::Stop:
        ++metrics_.finishedStop;
        break;
    case FinishReason::Length:
        ++metrics_.finishedLength;
        break;
    case FinishReason::Cancelled:
        ++metrics_.finishedCancelled;
        break;
    default:
        ++metrics_.finishedError;
    }
    if (active.generated > 0) metrics_.endToEndLatency.observe(seconds(now - active.arrival));
    ServeRequestRow row = rowOf(active, now);
    row.state = ServeRequestState::Finished;
    row.finish = reason;
    finishedRows_.push_back(row);
    if (finishedRows_.size() > options_.finishedRows)
        finishedRows_.erase(finishedRows_.begin(),
                            finishedRows_.end() - std::ptrdiff_t(options_.finishedRows));
    slotHolders_[active.slot] = -1;
    committedBlocks_ -= active.committedBlocks;
    const bool keep = (reason == FinishReason::Stop || reason == FinishReason::Length) &&
                      options_.heldSequences > 0 && active.fed > 0 &&
                      engine_.kvCache().contains(active.sequence);
    if (keep) {
        active.tokens.resize(active.fed);
        held_.push_back({active.sequence, active.id, std::move(active.tokens)});
        while (held_.size() > options_.heldSequences) {
            engine_.release(held_.front().sequence);
            held_.pop_front();
        }
    } else if (engine_.kvCache().contains(active.sequence)) {
        engine_.release(active.sequence);
    }
}

ServeRequestRow ServingLoop::rowOf(const Active& active, Clock::time_point now) const {
    ServeRequestRow row;
    row.id = active.id;
    row.slot = std::int32_t(active.slot);
    row.promptTokens = std::uint32_t(active.request.prompt.size());
    row.sharedPromptTokens = active.shared;
    row.generatedTokens = active.generated;
    row.arrivalSeconds = seconds(active.arrival - start_);
    row.queueSeconds = seconds(active.admitted - active.arrival);
    row.timeToFirstTokenSeconds =
        active.generated ? seconds(active.firstToken - active.arrival) : -1.0;
    row.elapsedSeconds = seconds(now - active.arrival);
    if (active.generated > 1)
        row.tokensPerSecond = double(active.generated - 1) /
                              std::max(1e-9, seconds(active.lastToken - active.firstToken));
    return row;
}

void ServingLoop::publish() {
    auto snapshot = std::make_shared<ServeSnapshot>();
    snapshot->step = metrics_.steps;
    snapshot->uptimeSeconds = secondsSinceStart();
    snapshot->slotRequests = slotHolders_;
    snapshot->batchInvariant = options_.batchInvariant;
    const auto& cache = engine_.kvCache();
    const auto now = Clock::now();
    std::vector<ServeRequestRow> rows = finishedRows_;
    for (const auto& active : active_) {
        ServeRequestRow row = rowOf(*active, now);
        row.state = active->generated ? ServeRequestState::Decoding : ServeRequestState::Prefilling;
        row.blocksHeld = cache.contains(active->sequence)
                             ? std::uint32_t(cache.blockTable(active->sequence).size())
                             : 0;
        rows.push_back(row);
    }
    std::uint32_t waiting = 0;
    {
        std::lock_guard lock(mutex_);
        waiting = std::uint32_t(waiting_.size());
        running_ = std::uint32_t(active_.size());
        metrics_.requestsRejected = rejected_;
        for (const auto& pending : waiting_) {
            ServeRequestRow row;
            row.id = pending.id;
            row.promptTokens = std::uint32_t(pending.request.prompt.size());
            row.arrivalSeconds = seconds(pending.arrival - start_);
            row.queueSeconds = row.elapsedSeconds = seconds(now - pending.arrival);
            rows.push_back(row);
        }
    }
    std::sort(rows.begin(), rows.end(),
              [](const ServeRequestRow& a, const ServeRequestRow& b) { return a.id < b.id; });
    snapshot->requests = std::move(rows);
    metrics_.running = std::uint32_t(active_.size());
    metrics_.waiting = waiting;
    metrics_.heldSequences = std::uint32_t(held_.size());
    metrics_.blocksCapacity = cache.capacityBlocks();
    metrics_.blocksFree = cache.freeBlocks();
    snapshot->metrics = metrics_;
    // The block map names each sequence by the request it serves.
    snapshot->blocks = snapshotKvCache(
        cache, "step " + std::to_string(metrics_.steps), std::int32_t(metrics_.steps),
        options_.slotCount, contextTokens_, [&](SequenceId sequence) -> KvOwner {
            for (const auto& active : active_)
                if (active->sequence == sequence)
                    return {"request " + std::to_string(active->id), std::int32_t(active->slot)};
            for (const auto& held : held_)
                if (held.sequence == sequence)
                    return {"held (request " + std::to_string(held.request) + ")", -1};
            return {};
        });
    {
        std::lock_guard lock(snapshotMutex_);
        snapshot_ = std::move(snapshot);
    }
    published_.notify_all();
}

} // namespace inferscope::compute::experiments
