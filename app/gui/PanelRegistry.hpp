#pragma once
// The one list of the window's panels. Each entry names a panel (its id: the --tab value and
// the export's file names), the group tab it sits in, its short tab name, the inferscope-cli
// command that prints its tables, whether its job needs the GPU engine, and how to build it.
// The deck, the View menu, the --tab ids, the scripted --run order and the export all follow
// this list; a new panel is one entry here (its own files do the rest).
#include "widgets/LabPanel.hpp"

#include <QList>
#include <QString>
#include <QStringList>
#include <functional>

namespace inferscope::gui {

struct PanelSpec {
    QString id;
    QString group;        // one of panelGroups()
    QString tabName;      // the short name on its tab (the panel's title is on its chart)
    QString cliCommand;   // the inferscope-cli command that prints the same tables
    bool gpuOnly = false; // its job batches sequences or builds engines: the Vulkan engine only
    std::function<widgets::LabPanel*(QWidget* parent)> make;
};

// In the order the export, the scripted run and --tab's help list them.
const QList<PanelSpec>& panelRegistry();
// The group tabs, in order.
const QStringList& panelGroups();
QStringList registeredPanelIds();

} // namespace inferscope::gui
