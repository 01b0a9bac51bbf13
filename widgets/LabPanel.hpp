#pragma once
// A panel of the lab: a chart panel that follows the lab's records and, where it measures
// something of its own, starts its own job (its JobControls) through the job runner. The
// window builds panels from one list (app/gui/PanelRegistry) and never names one: a panel's
// job, its scripted short run and why it may stay empty are its own.
#include "widgets/ChartPanel.hpp"
#include "widgets/PanelContext.hpp"

#include <QList>
#include <optional>

class QAction;

namespace inferscope::widgets {

class LabPanel : public ChartPanel {
    Q_OBJECT
public:
    using ChartPanel::ChartPanel;

    // Called once, before the first model loads: subscribe to the records this panel draws.
    virtual void attach(const PanelContext& context) = 0;
    // Starts the short version of this panel's job that the scripted `--run --export` runs;
    // returns its id, 0 when it could not start, nullopt when the panel has no job of its own.
    virtual std::optional<quint64> runScripted() { return std::nullopt; }
    // Why the panel is empty once a scripted run is over (the export's list of left-out panels).
    virtual QString emptyReason() const { return tr("nothing measured: ") + emptyHint(); }
    // Actions the panel offers in the window's File menu (e.g. writing a report); the window
    // adds them after its own entries, in the registry's order.
    virtual QList<QAction*> fileActions() { return {}; }

signals:
    // A job this panel started ended: ok, or failed with `error` ("cancelled" when the user
    // stopped it). `what` names the job for the status bar ("Speculative decoding").
    void jobEnded(const QString& what, bool ok, const QString& error);
};

} // namespace inferscope::widgets
