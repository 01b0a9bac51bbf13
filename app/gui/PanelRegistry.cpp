#include "app/gui/PanelRegistry.hpp"

#include "widgets/ActivationOutliersPanel.hpp"
#include "widgets/AttentionCostPanel.hpp"
#include "widgets/BatchingPanel.hpp"
#include "widgets/CachingPanel.hpp"
#include "widgets/ClassReportPanel.hpp"
#include "widgets/KernelTimingsPanel.hpp"
#include "widgets/KvBlocksPanel.hpp"
#include "widgets/KvCachePanel.hpp"
#include "widgets/MacCountsPanel.hpp"
#include "widgets/MemoryBudgetPanel.hpp"
#include "widgets/ModelCardPanel.hpp"
#include "widgets/QuantLevelsPanel.hpp"
#include "widgets/ReplayPanel.hpp"
#include "widgets/SchedulerPanel.hpp"
#include "widgets/SchemesPanel.hpp"
#include "widgets/ServePanel.hpp"
#include "widgets/SoftLabelsPanel.hpp"
#include "widgets/SpeculativePanel.hpp"
#include "widgets/TimingsPanel.hpp"

#include <QCoreApplication>

namespace inferscope::gui {

namespace {
template <class Panel> std::function<widgets::LabPanel*(QWidget*)> build() {
    return [](QWidget* parent) { return new Panel(parent); };
}
QString tr(const char* text) {
    return QCoreApplication::translate("PanelRegistry", text);
}
} // namespace

const QStringList& panelGroups() {
    static const QStringList groups{tr("Run"), tr("KV cache"), tr("Batching"), tr("Quantization"),
                                    tr("Draft && distil")};
    return groups;
}

const QList<PanelSpec>& panelRegistry() {
    const auto& g = panelGroups();
    static const QList<PanelSpec> panels{
        // id, group, tab, CLI command, GPU only, factory
        {"timings", g[0], tr("Prefill/decode"), "generate", false, build<widgets::TimingsPanel>()},
        {"kernel-timings", g[0], tr("Kernels"), "generate", false,
         build<widgets::KernelTimingsPanel>()},
        {"cached-vs-uncached", g[1], tr("Caching"), "generate", false,
         build<widgets::CachingPanel>()},
        {"attention-cost", g[1], tr("One head"), "attention", false,
         build<widgets::AttentionCostPanel>()},
        {"mac-counts", g[1], tr("MACs"), "macs", false, build<widgets::MacCountsPanel>()},
        {"kv-cache", g[1], tr("KV bytes"), "generate", false, build<widgets::KvCachePanel>()},
        {"activation-outliers", g[3], tr("Outliers"), "report", false,
         build<widgets::ActivationOutliersPanel>()},
        {"quant-levels", g[3], tr("Levels"), "report", false, build<widgets::QuantLevelsPanel>()},
        {"schemes", g[3], tr("Schemes"), "report", false, build<widgets::SchemesPanel>()},
        {"speculative", g[4], tr("Speculative"), "speculative", true,
         build<widgets::SpeculativePanel>()},
        {"soft-labels", g[4], tr("Soft labels"), "softlabels", false,
         build<widgets::SoftLabelsPanel>()},
        {"batching", g[2], tr("Batched decode"), "batch", true, build<widgets::BatchingPanel>()},
        {"scheduler", g[2], tr("Scheduler"), "schedule", true, build<widgets::SchedulerPanel>()},
        {"kv-blocks", g[2], tr("KV blocks"), "schedule", true, build<widgets::KvBlocksPanel>()},
        {"serve", g[2], tr("Serve"), "serve", true, build<widgets::ServePanel>()},
        {"replay", g[2], tr("Replay"), "replay", true, build<widgets::ReplayPanel>()},
        {"memory-budget", g[1], tr("Budget"), "budget", false, build<widgets::MemoryBudgetPanel>()},
        {"model-card", g[0], tr("Model"), "info", false, build<widgets::ModelCardPanel>()},
        {"class-report", g[0], tr("Report"), "class-report", false,
         build<widgets::ClassReportPanel>()},
    };
    return panels;
}

QStringList registeredPanelIds() {
    QStringList ids;
    for (const auto& spec : panelRegistry()) ids << spec.id;
    return ids;
}

} // namespace inferscope::gui
