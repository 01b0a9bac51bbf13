#include "app/gui/PanelDeck.hpp"

#include "app/gui/PanelRegistry.hpp"

#include <QEvent>
#include <QScrollArea>
#include <QSignalBlocker>
#include <QStackedWidget>
#include <QTabBar>
#include <QVBoxLayout>

namespace inferscope::gui {

PanelDeck::PanelDeck(QWidget* parent) : QWidget(parent) {
    setObjectName("panelDeck");
    groupBar_ = new QTabBar(this);
    groupBar_->setObjectName("panelGroups");
    panelBar_ = new QTabBar(this);
    panelBar_->setObjectName("panelTabs");
    panelBar_->setDocumentMode(true);
    // Few tabs per bar: all in sight at any presentation scale, none cut short.
    for (auto* bar : {groupBar_, panelBar_}) {
        bar->setUsesScrollButtons(false);
        bar->setElideMode(Qt::ElideNone);
        bar->setExpanding(false);
    }
    stack_ = new QStackedWidget(this);
    auto* column = new QVBoxLayout(this);
    column->setContentsMargins(0, 0, 0, 0);
    column->setSpacing(0);
    column->addWidget(groupBar_);
    column->addWidget(panelBar_);
    column->addWidget(stack_, 1);

    for (const auto& label : panelGroups()) {
        groups_.append({label, {}, {}, 0});
        groupBar_->addTab(label);
    }
    for (const auto& spec : panelRegistry()) {
        auto* panel = spec.make(stack_);
        Q_ASSERT(panel->panelId() == spec.id);
        panels_ << panel;
        // A panel taller than the window at a large scale scrolls inside its page: the
        // window keeps its size, the chart its room, the tables come into view by scrolling.
        auto* page = new QScrollArea(stack_);
        page->setObjectName(spec.id + "Page");
        page->setFrameShape(QFrame::NoFrame);
        page->setWidgetResizable(true);
        page->setWidget(panel);
        stack_->addWidget(page);
        for (auto& group : groups_)
            if (group.label == spec.group) {
                group.panels << panel;
                group.tabNames << spec.tabName;
            }
    }
    stack_->installEventFilter(this);
    connect(groupBar_, &QTabBar::currentChanged, this, &PanelDeck::showGroup);
    connect(panelBar_, &QTabBar::currentChanged, this, &PanelDeck::showMember);
    showGroup(0);
}

void PanelDeck::showGroup(int group) {
    if (group < 0 || group >= groups_.size() || groups_[group].panels.isEmpty()) return;
    {
        const QSignalBlocker block(groupBar_);
        groupBar_->setCurrentIndex(group);
    }
    const QSignalBlocker block(panelBar_);
    while (panelBar_->count() > 0) panelBar_->removeTab(0);
    const auto& members = groups_[group];
    // Short names on the tabs; the panel's full title is on its chart and in the tooltip.
    for (qsizetype i = 0; i < members.panels.size(); ++i) {
        panelBar_->addTab(members.tabNames[i]);
        panelBar_->setTabToolTip(int(i), members.panels[i]->title() + ": " +
                                             members.panels[i]->explanation());
    }
    panelBar_->setCurrentIndex(members.current);
    stack_->setCurrentWidget(pageOf(members.panels.at(members.current)));
}

void PanelDeck::showMember(int index) {
    auto& group = groups_[groupBar_->currentIndex()];
    if (index < 0 || index >= group.panels.size()) return;
    group.current = index;
    stack_->setCurrentWidget(pageOf(group.panels.at(index)));
}

widgets::LabPanel* PanelDeck::panel(const QString& id) const {
    for (auto* panel : panels_)
        if (panel->panelId() == id) return panel;
    return nullptr;
}

QList<PanelDeck::Group> PanelDeck::groups() const {
    QList<Group> result;
    for (const auto& group : groups_) {
        Group entry{group.label, {}};
        for (auto* panel : group.panels) entry.panelIds << panel->panelId();
        result << entry;
    }
    return result;
}

bool PanelDeck::showPanel(const QString& panelId) {
    for (qsizetype g = 0; g < groups_.size(); ++g)
        for (qsizetype i = 0; i < groups_[g].panels.size(); ++i)
            if (groups_[g].panels[i]->panelId() == panelId) {
                groups_[g].current = int(i);
                showGroup(int(g));
                return true;
            }
    return false;
}

widgets::ChartPanel* PanelDeck::currentPanel() const {
    const auto* page = qobject_cast<QScrollArea*>(stack_->currentWidget());
    return page ? qobject_cast<widgets::ChartPanel*>(page->widget()) : nullptr;
}

bool PanelDeck::eventFilter(QObject* watched, QEvent* event) {
    // A page out of sight passes no resize to its panel, yet an export draws the panel at
    // its size: the hidden panels follow the deck, as they would on their own page.
    if (watched == stack_ && event->type() == QEvent::Resize)
        for (auto* panel : panels_)
            if (!panel->isVisible())
                panel->resize(stack_->size().expandedTo(panel->minimumSizeHint()));
    return QWidget::eventFilter(watched, event);
}

QWidget* PanelDeck::pageOf(widgets::LabPanel* panel) const {
    for (int i = 0; i < stack_->count(); ++i)
        if (const auto* page = qobject_cast<QScrollArea*>(stack_->widget(i));
            page && page->widget() == panel)
            return stack_->widget(i);
    return nullptr;
}

void PanelDeck::attach(const widgets::PanelContext& context) {
    for (auto* panel : panels_) panel->attach(context);
}

void PanelDeck::setPresentationScale(double scale) {
    for (auto* panel : panels_) panel->setPresentationScale(scale);
}

} // namespace inferscope::gui
