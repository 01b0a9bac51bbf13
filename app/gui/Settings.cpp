#include "app/gui/Settings.hpp"

#include <algorithm>

namespace inferscope::gui {

GuiSettings GuiSettings::load(const QSettings& s) {
    GuiSettings g;
    g.firstStart = !s.contains("model/last") && !s.contains("model/recent");
    g.recentModels = s.value("model/recent").toStringList();
    g.lastModel = s.value("model/last").toString();
    g.prompt = s.value("prompt/text", g.prompt).toString();
    g.systemPrompt = s.value("prompt/system", g.systemPrompt).toString();
    g.chat = s.value("prompt/chat", g.chat).toBool();
    g.greedy = s.value("sampling/greedy", g.greedy).toBool();
    g.temperature = std::clamp(s.value("sampling/temperature", g.temperature).toDouble(), 0.0, 5.0);
    g.topK = std::clamp(s.value("sampling/topK", g.topK).toInt(), 0, 1000);
    g.topP = std::clamp(s.value("sampling/topP", g.topP).toDouble(), 0.0, 1.0);
    g.seed = std::max(0, s.value("sampling/seed", g.seed).toInt());
    g.repeatPenalty =
        std::clamp(s.value("sampling/repeatPenalty", g.repeatPenalty).toDouble(), 0.5, 3.0);
    g.maxTokens = std::clamp(s.value("sampling/maxTokens", g.maxTokens).toInt(), 1, 4096);
    g.backend = s.value("backend/choice", g.backend).toString();
    g.profileKernels = s.value("backend/profileKernels", g.profileKernels).toBool();
    g.int8Activations = s.value("backend/int8Activations", g.int8Activations).toBool();
    g.presentationScale =
        std::clamp(s.value("view/scale", g.presentationScale).toDouble(), 0.5, 3.0);
    g.geometry = s.value("view/geometry").toByteArray();
    g.windowState = s.value("view/state").toByteArray();
    return g;
}

void GuiSettings::save(QSettings& s) const {
    s.setValue("model/recent", recentModels);
    s.setValue("model/last", lastModel);
    s.setValue("prompt/text", prompt);
    s.setValue("prompt/system", systemPrompt);
    s.setValue("prompt/chat", chat);
    s.setValue("sampling/greedy", greedy);
    s.setValue("sampling/temperature", temperature);
    s.setValue("sampling/topK", topK);
    s.setValue("sampling/topP", topP);
    s.setValue("sampling/seed", seed);
    s.setValue("sampling/repeatPenalty", repeatPenalty);
    s.setValue("sampling/maxTokens", maxTokens);
    s.setValue("view/scale", presentationScale);
    s.setValue("backend/choice", backend);
    s.setValue("backend/profileKernels", profileKernels);
    s.setValue("backend/int8Activations", int8Activations);
    s.setValue("view/geometry", geometry);
    s.setValue("view/state", windowState);
}

void GuiSettings::addRecentModel(const QString& path) {
    recentModels.removeAll(path);
    recentModels.prepend(path);
    while (recentModels.size() > kMaxRecentModels) recentModels.removeLast();
}

void GuiSettings::saveInBackground(QThreadPool& writer) const {
    writer.start([copy = *this] {
        QSettings store;
        copy.save(store);
    });
}

} // namespace inferscope::gui
