#pragma once
// The window's panels in two levels of tabs, grouped as the chapter is (one run, what the KV
// cache saves, batching, quantization, drafts and soft labels): sixteen panels side by side
// leave no room for the controls column at presentation scale, five groups of at most five do.
// Panels keep their ids (the command line's --tab and the export names); the deck builds them,
// subscribes them to the lab's records and shows one by id. One stack holds all sixteen (as one
// tab widget did), with a bar of groups above a bar of the current group's panels.
#include <QList>
#include <QString>
#include <QWidget>

class QStackedWidget;
class QTabBar;

namespace inferscope::widgets {
class ActivationOutliersPanel;
class AttentionCostPanel;
class BatchingPanel;
class CachingPanel;
class ChartPanel;
class KernelTimingsPanel;
class KvBlocksPanel;
class KvCachePanel;
class LabJobs;
class MacCountsPanel;
class MemoryBudgetPanel;
class ModelCardPanel;
class QuantLevelsPanel;
class SchedulerPanel;
class SchemesPanel;
class SoftLabelsPanel;
class SpeculativePanel;
class TimingsPanel;
} // namespace inferscope::widgets

namespace inferscope::gui {

class PanelDeck : public QWidget {
    Q_OBJECT
public:
    explicit PanelDeck(QWidget* parent = nullptr);

    // Every panel, in the order the export and the command line list them.
    QList<widgets::ChartPanel*> panels() const;
    // The panel ids in that order (the command line checks --tab against them).
    static QStringList panelIds();
    // Brings the panel's group and the panel to the front; false for an unknown id.
    bool showPanel(const QString& panelId);
    widgets::ChartPanel* currentPanel() const;
    // The group tabs (label, the panels' ids), for the View menu.
    struct Group {
        QString label;
        QStringList panelIds;
    };
    QList<Group> groups() const;
    QTabBar* groupBar() const { return groupBar_; }
    QTabBar* panelBar() const { return panelBar_; } // the current group's panels
    void showGroup(int group);

    void subscribe(widgets::LabJobs& jobs);
    void setPresentationScale(double scale);

    widgets::TimingsPanel* timings() const { return timings_; }
    widgets::KernelTimingsPanel* kernels() const { return kernels_; }
    widgets::CachingPanel* caching() const { return caching_; }
    widgets::AttentionCostPanel* attention() const { return attention_; }
    widgets::MacCountsPanel* macCounts() const { return macs_; }
    widgets::KvCachePanel* kvCache() const { return kvCache_; }
    widgets::ActivationOutliersPanel* outliers() const { return outliers_; }
    widgets::QuantLevelsPanel* levels() const { return levels_; }
    widgets::SchemesPanel* schemes() const { return schemes_; }
    widgets::SpeculativePanel* speculative() const { return speculative_; }
    widgets::SoftLabelsPanel* softLabels() const { return softLabels_; }
    widgets::BatchingPanel* batching() const { return batching_; }
    widgets::SchedulerPanel* scheduler() const { return scheduler_; }
    widgets::KvBlocksPanel* kvBlocks() const { return kvBlocks_; }
    widgets::MemoryBudgetPanel* budget() const { return budget_; }
    widgets::ModelCardPanel* modelCard() const { return modelCard_; }

private:
    struct Members {
        QString label;
        QList<widgets::ChartPanel*> panels;
        int current = 0; // the panel last shown in this group
    };
    void addGroup(const QString& label, const QList<widgets::ChartPanel*>& members);
    void showMember(int index);

    widgets::TimingsPanel* timings_ = nullptr;
    widgets::KernelTimingsPanel* kernels_ = nullptr;
    widgets::CachingPanel* caching_ = nullptr;
    widgets::AttentionCostPanel* attention_ = nullptr;
    widgets::MacCountsPanel* macs_ = nullptr;
    widgets::KvCachePanel* kvCache_ = nullptr;
    widgets::ActivationOutliersPanel* outliers_ = nullptr;
    widgets::QuantLevelsPanel* levels_ = nullptr;
    widgets::SchemesPanel* schemes_ = nullptr;
    widgets::SpeculativePanel* speculative_ = nullptr;
    widgets::SoftLabelsPanel* softLabels_ = nullptr;
    widgets::BatchingPanel* batching_ = nullptr;
    widgets::SchedulerPanel* scheduler_ = nullptr;
    widgets::KvBlocksPanel* kvBlocks_ = nullptr;
    widgets::MemoryBudgetPanel* budget_ = nullptr;
    widgets::ModelCardPanel* modelCard_ = nullptr;
    QList<Members> groups_;
    QTabBar* groupBar_ = nullptr;
    QTabBar* panelBar_ = nullptr;
    QStackedWidget* stack_ = nullptr;
};

} // namespace inferscope::gui
