#pragma once
// The small widgets every panel's controls are made of, made one way: a table view over a
// TableModel (columns sized to their contents, at most so high) and a spin box with its range.
class QSpinBox;
class QTableView;
class QWidget;

namespace inferscope::widgets {

class TableModel;

// maxHeight 0: as high as the layout gives it.
QTableView* makeTableView(QWidget* parent, const char* objectName, TableModel* model,
                          int maxHeight = 0);
QSpinBox* makeSpinBox(QWidget* parent, const char* objectName, int low, int high, int value);

} // namespace inferscope::widgets
