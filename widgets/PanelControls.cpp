#include "widgets/PanelControls.hpp"

#include "widgets/TableModel.hpp"

#include <QHeaderView>
#include <QSpinBox>
#include <QTableView>

namespace inferscope::widgets {

QTableView* makeTableView(QWidget* parent, const char* objectName, TableModel* model,
                          int maxHeight) {
    auto* view = new QTableView(parent);
    view->setObjectName(objectName);
    view->setModel(model);
    view->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    if (maxHeight > 0) view->setMaximumHeight(maxHeight);
    return view;
}

QSpinBox* makeSpinBox(QWidget* parent, const char* objectName, int low, int high, int value) {
    auto* box = new QSpinBox(parent);
    box->setObjectName(objectName);
    box->setRange(low, high);
    box->setValue(value);
    return box;
}

} // namespace inferscope::widgets
