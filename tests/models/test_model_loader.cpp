// loadModel's dispatch and refusals, and where set-up data is looked for: the cache folder
// from the environment, the default model and corpus paths, and the hint to run set-up.
#include "models/LoadedModel.hpp"
#include "models/ModelError.hpp"
#include "models/WeightStore.hpp"
#include "models/formats/MappedFile.hpp"
#include "tests/ProcStatus.hpp"

#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <span>
#include <string>
#include <vector>

using namespace inferscope::models;

namespace {

// Sets (or unsets, for nullopt) an environment variable for one scope.
class ScopedEnvironment {
public:
    ScopedEnvironment(const char* name, std::optional<std::string> value) : name_(name) {
        if (const char* old = std::getenv(name)) old_ = old;
        if (value)
            ::setenv(name, value->c_str(), 1);
        else
            ::unsetenv(name);
    }
    ~ScopedEnvironment() {
        if (old_)
            ::setenv(name_, old_->c_str(), 1);
        else
            ::unsetenv(name_);
    }
    ScopedEnvironment(const ScopedEnvironment&) = delete;
    ScopedEnvironment& operator=(const ScopedEnvironment&) = delete;

private:
    const char* name_;
    std::optional<std::string> old_;
};

template <typename Action> std::optional<ModelError> modelErrorOf(Action&& action) {
    try {
        action();
    } catch (const ModelError& error) {
        return error;
    }
    return std::nullopt;
}

} // namespace

class TestModelLoader : public QObject {
    Q_OBJECT
private slots:
    void cacheDirectoryFollowsTheEnvironment();
    void defaultModelNeedsSetUp();
    void refusesWhatIsNotAModel();
    void mappedPagesCanLeaveResidentMemory();
    void oneTensorsPagesCanLeaveResidentMemory();
};

void TestModelLoader::cacheDirectoryFollowsTheEnvironment() {
    ScopedEnvironment home("HOME", "/home/someone");
    {
        ScopedEnvironment cache("INFERSCOPE_CACHE", "/data/scope");
        ScopedEnvironment xdg("XDG_CACHE_HOME", "/xdg");
        QCOMPARE(cacheDirectory(), std::filesystem::path("/data/scope"));
        QCOMPARE(defaultCorpusPath(), std::filesystem::path("/data/scope/corpus/ruth-kjv.txt"));
    }
    {
        ScopedEnvironment cache("INFERSCOPE_CACHE", std::nullopt);
        ScopedEnvironment xdg("XDG_CACHE_HOME", "/xdg");
        QCOMPARE(cacheDirectory(), std::filesystem::path("/xdg/inferscope"));
    }
    {
        ScopedEnvironment cache("INFERSCOPE_CACHE", "");
        ScopedEnvironment xdg("XDG_CACHE_HOME", std::nullopt);
        QCOMPARE(cacheDirectory(), std::filesystem::path("/home/someone/.cache/inferscope"));
        QCOMPARE(resolveModelPath("~/m.gguf"), std::filesystem::path("/home/someone/m.gguf"));
    }
}

void TestModelLoader::defaultModelNeedsSetUp() {
    QTemporaryDir dir;
    const std::filesystem::path cache = dir.path().toStdString();
    ScopedEnvironment environment("INFERSCOPE_CACHE", cache.string());
    const auto error = modelErrorOf([] { resolveModelPath("default"); });
    QVERIFY(error);
    QVERIFY2(std::string(error->what()).find("scripts/setup") != std::string::npos, error->what());
    QVERIFY2(std::string(error->what()).find("SmolLM2-135M-Instruct.Q4_1.gguf") !=
                 std::string::npos,
             error->what());

    const auto expected = cache / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf";
    std::filesystem::create_directories(expected.parent_path());
    std::ofstream(expected) << "placeholder";
    QCOMPARE(resolveModelPath("default"), expected);
    // Anything else is a path, untouched.
    QCOMPARE(resolveModelPath("some/model.gguf"), std::filesystem::path("some/model.gguf"));
}

void TestModelLoader::refusesWhatIsNotAModel() {
    QTemporaryDir dir;
    const std::filesystem::path root = dir.path().toStdString();
    auto error = modelErrorOf([&] { loadModel(root / "absent.gguf"); });
    QVERIFY(error);
    QVERIFY2(std::string(error->what()).find("no such file") != std::string::npos, error->what());

    std::ofstream(root / "notes.txt") << "just some text";
    error = modelErrorOf([&] { loadModel(root / "notes.txt"); });
    QVERIFY(error);
    QCOMPARE(error->field(), std::string("magic"));
    QCOMPARE(error->offset(), std::optional<std::uint64_t>(0));

    std::ofstream(root / "tiny") << "GG"; // shorter than the magic
    QVERIFY(modelErrorOf([&] { loadModel(root / "tiny"); }));

    // The GGUF magic with nothing behind it goes to the GGUF reader, which refuses it.
    std::ofstream(root / "cut.gguf") << "GGUF";
    error = modelErrorOf([&] { loadModel(root / "cut.gguf"); });
    QVERIFY(error);
    QCOMPARE(error->file(), (root / "cut.gguf").string());

    // A folder without config.json says what a safetensors folder needs.
    std::filesystem::create_directories(root / "empty");
    error = modelErrorOf([&] { loadModel(root / "empty"); });
    QVERIFY(error);
    QVERIFY2(std::string(error->what()).find("config.json") != std::string::npos, error->what());
}

namespace {
long fileBackedResidentKiB() {
    return inferscope::tests::procStatus("RssFile:");
}
// Reads every byte of the mapping (so its pages are resident) into one checksum.
std::uint64_t checksumOf(const MappedFile& mapping) {
    std::uint64_t total = 0;
    for (auto b : mapping.bytes()) total = total * 31 + b;
    return total;
}
} // namespace

// An engine that has uploaded the weights drops the file's pages (WeightStore::
// releaseResidentPages): they leave this process's resident memory, and the bytes read the
// same afterwards (they come back from the page cache).
void TestModelLoader::mappedPagesCanLeaveResidentMemory() {
    QTemporaryDir dir;
    const std::filesystem::path path = dir.filePath("weights.bin").toStdString();
    std::vector<std::uint8_t> bytes(32u << 20);
    for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = std::uint8_t(i * 2654435761u >> 13);
    std::ofstream(path, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
    auto mapping = std::make_shared<const MappedFile>(path);
    WeightStore store;
    store.addMapping(mapping);
    const auto sum = [&] { return checksumOf(*mapping); };
    const auto before = fileBackedResidentKiB();
    const auto expected = sum();
    const auto touched = fileBackedResidentKiB();
    QVERIFY2(touched - before >= 30 * 1024,
             qPrintable(QString("%1 -> %2").arg(before).arg(touched)));
    store.releaseResidentPages();
    const auto released = fileBackedResidentKiB();
    QVERIFY2(touched - released >= 30 * 1024,
             qPrintable(QString("%1 -> %2").arg(touched).arg(released)));
    QCOMPARE(sum(), expected);
    QVERIFY(std::equal(bytes.begin(), bytes.end(), mapping->bytes().begin()));
}

// An engine drops each matrix's pages once it is uploaded (WeightStore::releaseResidentPages
// of a name): that tensor's pages leave, the others stay, and a tensor held in memory (not in
// a mapping) keeps its bytes.
void TestModelLoader::oneTensorsPagesCanLeaveResidentMemory() {
    QTemporaryDir dir;
    const std::filesystem::path path = dir.filePath("weights.bin").toStdString();
    constexpr std::size_t kHalf = 16u << 20;
    std::vector<std::uint8_t> bytes(2 * kHalf);
    for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = std::uint8_t(i * 2654435761u >> 13);
    std::ofstream(path, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
    auto mapping = std::make_shared<const MappedFile>(path);
    const std::vector<std::uint8_t> held(4096, 7);
    WeightStore store;
    store.addMapping(mapping);
    const auto tensor = [](const char* name, std::span<const std::uint8_t> data) {
        StoredTensor t;
        t.name = name;
        t.type = TensorType::F32;
        t.shape = {data.size() / 4};
        t.data = data;
        return t;
    };
    store.add(tensor("first", mapping->bytes().first(kHalf)));
    store.add(tensor("second", mapping->bytes().subspan(kHalf)));
    store.add(tensor("held", held));
    const auto sum = [&] { return checksumOf(*mapping); };
    const auto expected = sum();
    const auto touched = fileBackedResidentKiB();
    store.releaseResidentPages("first");
    const auto released = fileBackedResidentKiB();
    // One half left: at least 15 MiB of its 16, and not the other half's 16.
    QVERIFY2(touched - released >= 15 * 1024 && touched - released < 24 * 1024,
             qPrintable(QString("%1 -> %2").arg(touched).arg(released)));
    store.releaseResidentPages("held");
    store.releaseResidentPages("no such tensor");
    QVERIFY(std::all_of(held.begin(), held.end(), [](std::uint8_t b) { return b == 7; }));
    QCOMPARE(sum(), expected);
}

QTEST_APPLESS_MAIN(TestModelLoader)
#include "test_model_loader.moc"
