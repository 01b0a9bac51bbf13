#include "compute/experiments/replay/ReplayRun.hpp"

#include <httplib.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <cmath>
#include <mutex>
#include <random>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace inferscope::compute::experiments {

namespace {
using Clock = std::chrono::steady_clock;
using Json = nlohmann::json;

struct Endpoint {
    std::string schemeHostPort;
    std::string prefix; // "" or a path before /v1
};

Endpoint parseUrl(std::string url) {
    if (url.rfind("http://", 0) != 0 && url.rfind("https://", 0) != 0)
        throw std::invalid_argument("the server URL must start with http:// or https://, not '" +
                                    url + "'");
    while (!url.empty() && url.back() == '/') url.pop_back();
    const auto hostStart = url.find("://") + 3;
    const auto slash = url.find('/', hostStart);
    Endpoint endpoint;
    endpoint.schemeHostPort = url.substr(0, slash);
    if (slash != std::string::npos) endpoint.prefix = url.substr(slash);
    if (endpoint.prefix.size() >= 3 && endpoint.prefix.ends_with("/v1"))
        endpoint.prefix.resize(endpoint.prefix.size() - 3);
    if (endpoint.schemeHostPort.size() <= hostStart)
        throw std::invalid_argument("the server URL names no host: '" + url + "'");
    return endpoint;
}

std::unique_ptr<httplib::Client> clientFor(const Endpoint& endpoint, const ReplayRequest& request) {
    auto client = std::make_unique<httplib::Client>(endpoint.schemeHostPort);
    const auto seconds = time_t(std::ceil(request.timeoutSeconds));
    client->set_connection_timeout(10, 0);
    client->set_read_timeout(seconds, 0);
    client->set_write_timeout(seconds, 0);
    if (!request.apiKey.empty()) client->set_bearer_token_auth(request.apiKey);
    return client;
}

std::map<std::string, double> readMetrics(const Endpoint& endpoint, const ReplayRequest& request) {
    auto client = clientFor(endpoint, request);
    client->set_read_timeout(10, 0);
    auto result = client->Get(endpoint.prefix + "/metrics");
    if (!result || result->status != 200) return {};
    return parsePrometheusSamples(result->body);
}

// One streamed request, timed from just before it is sent.
ReplayRecord sendOne(const Endpoint& endpoint, const ReplayRequest& request,
                     const std::string& model, std::uint32_t index, Clock::time_point epoch) {
    ReplayRecord record;
    record.index = index;
    const auto& entry = request.mix[index];
    record.wantedTokens = entry.outputTokens;
    Json body = {{"model", model},
                 {"prompt", entry.prompt},
                 {"max_tokens", entry.outputTokens},
                 {"temperature", 0},
                 {"stream", true},
                 {"stream_options", {{"include_usage", true}}}};
    if (request.ignoreEos) body["ignore_eos"] = true;
    auto client = clientFor(endpoint, request);
    std::string pending;
    std::uint32_t textChunks = 0;
    std::optional<std::uint32_t> usageTokens;
    Clock::time_point last;
    bool first = true;
    std::string failure;
    httplib::Request http;
    http.method = "POST";
    http.path = endpoint.prefix + "/v1/completions";
    http.body = body.dump();
    http.set_header("Content-Type", "application/json");
    if (!request.apiKey.empty()) http.set_header("Authorization", "Bearer " + request.apiKey);
    const auto sent = Clock::now();
    record.sentSeconds = std::chrono::duration<double>(sent - epoch).count();
    http.content_receiver = [&](const char* data, std::size_t size, std::uint64_t, std::uint64_t) {
        const auto now = Clock::now();
        pending.append(data, size);
        std::size_t end = 0;
        while ((end = pending.find("\n\n")) != std::string::npos) {
            std::string event = pending.substr(0, end);
            pending.erase(0, end + 2);
            if (event.rfind("data: ", 0) != 0) continue;
            event.erase(0, 6);
            if (event == "[DONE]") continue;
            const auto json = Json::parse(event, nullptr, false);
            if (json.is_discarded()) continue;
            if (json.contains("error")) {
                failure = json["error"].value("message", "an error event");
                continue;
            }
            if (json.contains("usage") && json["usage"].is_object()) {
                usageTokens = json["usage"].value("completion_tokens", 0u);
                record.promptTokens = json["usage"].value("prompt_tokens", 0u);
            }
            if (!json.contains("choices") || json["choices"].empty()) continue;
            const auto& choice = json["choices"][0];
            std::string text;
            if (choice.contains("text") && choice["text"].is_string()) text = choice["text"];
            // A chunk without text is a token only when it ends an answer that had none (a
            // token that decodes to nothing, such as a control token under ignore_eos).
            const bool finishes =
                choice.contains("finish_reason") && !choice["finish_reason"].is_null();
            if (text.empty() && !(finishes && first)) continue;
            ++textChunks;
            if (first) {
                record.ttftSeconds = std::chrono::duration<double>(now - sent).count();
                first = false;
            } else {
                record.itlSeconds.push_back(std::chrono::duration<double>(now - last).count());
            }
            last = now;
        }
        return true;
    };
    httplib::Response response;
    httplib::Error error = httplib::Error::Success;
    const bool sentOk = client->send(http, response, error);
    record.e2elSeconds = std::chrono::duration<double>(Clock::now() - sent).count();
    if (!sentOk) {
        record.error = "HTTP: " + httplib::to_string(error);
    } else if (response.status != 200) {
        record.error = "HTTP " + std::to_string(response.status);
        const auto json = Json::parse(response.body, nullptr, false);
        if (!json.is_discarded() && json.contains("error") && json["error"].is_object())
            record.error += ": " + json["error"].value("message", "");
    } else if (!failure.empty()) {
        record.error = failure;
    } else if (first) {
        record.error = "no text came back";
    } else {
        record.ok = true;
    }
    record.outputTokens = usageTokens.value_or(textChunks);
    return record;
}
} // namespace

std::vector<MixEntry> chapterMix(std::uint32_t requests, std::uint64_t seed) {
    RequestMixSpec spec;
    spec.requests = requests;
    spec.seed = seed;
    spec.total = std::uint32_t(std::llround(1874.0 * requests / 64.0));
    static const char* topics[] = {"the sea",    "bread",   "a lighthouse", "rain",
                                   "the moon",   "a river", "winter",       "a library",
                                   "a mountain", "bees",    "a train",      "the wind"};
    std::vector<MixEntry> mix;
    const auto lengths = skewedLengths(spec);
    for (std::size_t i = 0; i < lengths.size(); ++i)
        mix.push_back({"Request " + std::to_string(i + 1) + ": write a few sentences about " +
                           topics[i % std::size(topics)] + ".",
                       lengths[i]});
    return mix;
}

std::map<std::string, double> parsePrometheusSamples(const std::string& text) {
    std::map<std::string, double> samples;
    std::istringstream lines(text);
    std::string line;
    while (std::getline(lines, line)) {
        if (line.empty() || line[0] == '#') continue;
        const auto space = line.rfind(' ');
        if (space == std::string::npos) continue;
        try {
            samples[line.substr(0, space)] = std::stod(line.substr(space + 1));
        } catch (const std::exception&) {
            // A value we cannot read (e.g. a timestamp after it): skipped.
        }
    }
    return samples;
}

ReplayResult runReplay(const ReplayRequest& request,
                       const std::function<void(const std::string&)>& progress) {
    if (request.mix.empty()) throw std::invalid_argument("the request mix is empty");
    if (request.rate <= 0 && request.concurrency == 0)
        throw std::invalid_argument("a replay needs a rate above 0 or a concurrency of 1 or more");
    const Endpoint endpoint = parseUrl(request.url);
    ReplayResult result;
    result.model = request.model;
    if (result.model.empty()) {
        auto client = clientFor(endpoint, request);
        client->set_read_timeout(30, 0);
        auto models = client->Get(endpoint.prefix + "/v1/models");
        if (!models || models->status != 200)
            throw std::runtime_error(request.url + "/v1/models did not answer (" +
                                     (models ? "HTTP " + std::to_string(models->status)
                                             : httplib::to_string(models.error())) +
                                     "): give --model NAME");
        const auto json = Json::parse(models->body, nullptr, false);
        if (json.is_discarded() || !json.contains("data") || json["data"].empty() ||
            !json["data"][0].contains("id"))
            throw std::runtime_error(request.url + "/v1/models lists no model: give --model NAME");
        result.model = json["data"][0]["id"].get<std::string>();
    }
    result.metricsBefore = readMetrics(endpoint, request);
    if (progress) progress("replaying " + std::to_string(request.mix.size()) + " requests");
    result.records.resize(request.mix.size());
    const auto epoch = Clock::now();
    auto runOne = [&](std::uint32_t index) {
        result.records[index] = sendOne(endpoint, request, result.model, index, epoch);
    };
    std::vector<std::thread> threads;
    // Outside the branch: the workers read it until they are joined below (AddressSanitizer
    // found it going out of scope while they ran).
    std::atomic<std::uint32_t> next{0};
    if (request.rate > 0) {
        // Poisson arrivals: exponential gaps of mean 1 / rate, the same for the same seed.
        std::mt19937_64 random(request.seed);
        std::exponential_distribution<double> gap(request.rate);
        double at = 0;
        for (std::uint32_t i = 0; i < request.mix.size(); ++i) {
            std::this_thread::sleep_until(epoch + std::chrono::duration_cast<Clock::duration>(
                                                      std::chrono::duration<double>(at)));
            threads.emplace_back(runOne, i);
            at += gap(random);
        }
    } else {
        const auto workers = std::min<std::size_t>(request.concurrency, request.mix.size());
        for (std::size_t w = 0; w < workers; ++w)
            threads.emplace_back([&] {
                for (std::uint32_t i; (i = next.fetch_add(1)) < request.mix.size();) runOne(i);
            });
    }
    for (auto& thread : threads) thread.join();
    result.durationSeconds = std::chrono::duration<double>(Clock::now() - epoch).count();
    result.metricsAfter = readMetrics(endpoint, request);
    result.summary = summarizeReplay(result.records, result.durationSeconds, request.slo);
    return result;
}

Table replayServerMetricsTable(const ReplayResult& result) {
    Table table;
    table.id = "replay-server-metrics";
    table.title = "The server's /metrics, before and after";
    table.addColumn("sample")
        .addColumn("before", "", -1)
        .addColumn("after", "", -1)
        .addColumn("delta", "", -1);
    for (const auto& [name, after] : result.metricsAfter) {
        const auto it = result.metricsBefore.find(name);
        const double before = it == result.metricsBefore.end() ? 0.0 : it->second;
        if (after == before || name.find("_bucket") != std::string::npos) continue;
        table.addRow({name, before, after, after - before});
    }
    if (result.metricsAfter.empty()) table.notes.push_back("the server has no /metrics");
    return table;
}

} // namespace inferscope::compute::experiments
