#pragma once
// What the window remembers between runs (QSettings, organisation "InferScope").
#include <QSettings>
#include <QString>
#include <QStringList>
#include <QThreadPool>

namespace inferscope::gui {

struct GuiSettings {
    static constexpr int kMaxRecentModels = 8;

    QStringList recentModels; // most recent first
    QString lastModel;
    bool firstStart = true; // no settings written yet: load the default model
    QString prompt = "What is the capital of France?";
    QString systemPrompt;
    bool chat = true;
    bool greedy = true;
    double temperature = 0.8;
    int topK = 40;
    double topP = 0.95;
    int seed = 0;
    double repeatPenalty = 1.0;
    int maxTokens = 64;
    double presentationScale = 1.0;
    QString backend;              // BackendChoice::key(); empty: the first Vulkan device, else CPU
    bool profileKernels = false;  // GPU timestamps per kernel (serializes the work)
    bool int8Activations = false; // EngineOptions::int8Activations for the Vulkan engine
    QByteArray geometry;
    QByteArray windowState;

    static GuiSettings load(const QSettings& settings);
    void save(QSettings& settings) const;
    // Saves a copy to the application's QSettings on one of writer's threads. QSettings syncs
    // the file to disk, 0.1-0.3 s on a busy disk: too long for the GUI thread. A writer with
    // one thread keeps the writes in order.
    void saveInBackground(QThreadPool& writer) const;
    // Moves path to the front of recentModels, dropping duplicates and the oldest.
    void addRecentModel(const QString& path);
};

} // namespace inferscope::gui
