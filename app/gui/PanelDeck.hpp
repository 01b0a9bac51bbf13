#pragma once
// The window's panels in two levels of tabs, grouped as the chapter is (one run, what the KV
// cache saves, batching, quantization, drafts and soft labels): sixteen panels side by side
// leave no room for the controls column at presentation scale, five groups of at most five do.
// The deck builds every panel of the registry (app/gui/PanelRegistry), attaches it to the lab
// and shows one by id; one stack holds them all (each in a page that scrolls when the panel is
// taller than the window), under a bar of groups and a bar of the current group's panels.
#include "widgets/LabPanel.hpp"

#include <QList>
#include <QString>
#include <QWidget>

class QStackedWidget;
class QTabBar;

namespace inferscope::gui {

class PanelDeck : public QWidget {
    Q_OBJECT
public:
    explicit PanelDeck(QWidget* parent = nullptr);

    // Every panel, in the registry's order (the export's and the command line's).
    QList<widgets::LabPanel*> panels() const { return panels_; }
    widgets::LabPanel* panel(const QString& id) const; // nullptr for an unknown id
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

    void attach(const widgets::PanelContext& context);
    void setPresentationScale(double scale);

private:
    struct Members {
        QString label;
        QList<widgets::LabPanel*> panels;
        QStringList tabNames;
        int current = 0; // the panel last shown in this group
    };
    void showMember(int index);
    QWidget* pageOf(widgets::LabPanel* panel) const; // the scroll area that holds it
    bool eventFilter(QObject* watched, QEvent* event) override;

    QList<widgets::LabPanel*> panels_;
    QList<Members> groups_;
    QTabBar* groupBar_ = nullptr;
    QTabBar* panelBar_ = nullptr;
    QStackedWidget* stack_ = nullptr;
};

} // namespace inferscope::gui
