// The serving loop's parts that need no model: stop strings over streamed text, the
// latency histograms and their Prometheus exposition, and which hosts count as loopback.
#include "compute/experiments/serve/OpenAiServer.hpp"
#include "compute/experiments/serve/ServeMetrics.hpp"
#include "compute/experiments/serve/StopStrings.hpp"

#include <QtTest>

#include <cstring>
#include <regex>
#include <set>
#include <sstream>

using namespace inferscope::compute::experiments;

class ServePartsTest : public QObject {
    Q_OBJECT

private slots:
    void stopStringHeldBackUntilDecided() {
        StopStrings stops({"END", "\n\n"});
        QCOMPARE(stops.add("Hello E"), std::string("Hello "));
        QCOMPARE(stops.add("N"), std::string());
        // "ENx" cannot be the start of a stop string any more: all of it goes on.
        QCOMPARE(stops.add("x"), std::string("ENx"));
        QCOMPARE(stops.add(" done\n"), std::string(" done"));
        QCOMPARE(stops.add("\nmore"), std::string());
        QVERIFY(stops.stopped());
        QCOMPARE(stops.add("after"), std::string());
        QCOMPARE(stops.flush(), std::string());
    }

    void stopStringsFlushWithoutMatch() {
        StopStrings stops({"###"});
        QCOMPARE(stops.add("a #"), std::string("a "));
        QCOMPARE(stops.add("#"), std::string());
        QVERIFY(!stops.stopped());
        QCOMPARE(stops.flush(), std::string("##"));
        StopStrings none({});
        QCOMPARE(none.add("text"), std::string("text"));
    }

    void earliestStopWins() {
        StopStrings stops({"cd", "b"});
        QCOMPARE(stops.add("abcd"), std::string("a"));
        QVERIFY(stops.stopped());
    }

    void histogramBucketsAndQuantiles() {
        LatencyHistogram h({0.1, 1.0, 10.0});
        for (double v : {0.05, 0.5, 0.5, 5.0, 50.0}) h.observe(v);
        QCOMPARE(h.count, std::uint64_t(5));
        QCOMPARE(h.counts, (std::vector<std::uint64_t>{1, 2, 1, 1}));
        QCOMPARE(h.quantileBound(0.5), 1.0);
        QCOMPARE(h.quantileBound(0.8), 10.0);
        QCOMPARE(h.quantileBound(1.0), 20.0); // +Inf bucket: twice the largest bound
        QVERIFY(std::abs(h.sum - 56.05) < 1e-9);
    }

    void prometheusExposition() {
        ServeMetrics m;
        m.blocksCapacity = 100;
        m.blocksFree = 75;
        m.generatedTokens = 42;
        m.timeToFirstToken.observe(0.3);
        m.timeToFirstToken.observe(3.0);
        const auto text = prometheusText(m, "small \"model\"");
        // Every sample line belongs to a family announced by # HELP and # TYPE before it.
        std::istringstream lines(text);
        std::string line, family;
        std::set<std::string> typed;
        // name{model_name="small \"model\""[,label="value"]} value
        const std::regex sample("^([a-z0-9_:]+)\\{model_name=\"small "
                                "\\\\\"model\\\\\"\"(,[a-z_]+=\"[^\"]*\")?\\} (\\S+)$");
        int samples = 0;
        while (std::getline(lines, line)) {
            if (line.rfind("# TYPE ", 0) == 0) {
                std::istringstream words(line.substr(7));
                std::string name, type;
                words >> name >> type;
                QVERIFY2(type == "gauge" || type == "counter" || type == "histogram", line.c_str());
                typed.insert(name);
                continue;
            }
            if (line.rfind("# HELP ", 0) == 0) continue;
            std::smatch match;
            QVERIFY2(std::regex_match(line, match, sample), line.c_str());
            std::string name = match[1];
            for (const char* suffix : {"_bucket", "_sum", "_count"})
                if (!typed.count(name) && name.size() > std::strlen(suffix) &&
                    name.ends_with(suffix))
                    name.resize(name.size() - std::strlen(suffix));
            QVERIFY2(typed.count(name), line.c_str());
            ++samples;
        }
        QVERIFY(samples > 20);
        QVERIFY(text.find(
                    "inferscope_kv_cache_usage_perc{model_name=\"small \\\"model\\\"\"} 0.25\n") !=
                std::string::npos);
        QVERIFY(
            text.find(
                "inferscope_generation_tokens_total{model_name=\"small \\\"model\\\"\"} 42\n") !=
            std::string::npos);
        // Cumulative buckets: 0.3 s in le=0.5, both by le=5, +Inf holds the count.
        QVERIFY(text.find("inferscope_time_to_first_token_seconds_bucket{model_name=\"small "
                          "\\\"model\\\"\",le=\"0.5\"} 1\n") != std::string::npos);
        QVERIFY(text.find("inferscope_time_to_first_token_seconds_bucket{model_name=\"small "
                          "\\\"model\\\"\",le=\"5\"} 2\n") != std::string::npos);
        QVERIFY(text.find("inferscope_time_to_first_token_seconds_bucket{model_name=\"small "
                          "\\\"model\\\"\",le=\"+Inf\"} 2\n") != std::string::npos);
        QVERIFY(text.find("inferscope_time_to_first_token_seconds_count{model_name=\"small "
                          "\\\"model\\\"\"} 2\n") != std::string::npos);
    }

    void loopbackHosts() {
        QVERIFY(isLoopbackHost("127.0.0.1"));
        QVERIFY(isLoopbackHost("127.8.9.10"));
        QVERIFY(isLoopbackHost("localhost"));
        QVERIFY(isLoopbackHost("::1"));
        QVERIFY(!isLoopbackHost("0.0.0.0"));
        QVERIFY(!isLoopbackHost("192.168.1.10"));
        QVERIFY(!isLoopbackHost("::"));
        QVERIFY(!isLoopbackHost("example.org"));
    }
};

QTEST_GUILESS_MAIN(ServePartsTest)
#include "test_serve_parts.moc"
