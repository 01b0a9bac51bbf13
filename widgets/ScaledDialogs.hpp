#pragma once
// File choosers and message boxes that follow the presentation scale. A dialog is a window of
// its own, and Qt hands a window none of its parent's font, so the static QFileDialog and
// QMessageBox calls showed normal-size text on a window scaled for a projector. These take the
// font of `parent` (a widget inside the scaled area) and use Qt's own file dialog, which
// honours it, rather than the platform's.
#include <QString>

class QWidget;

namespace inferscope::widgets {

QString chooseFileToOpen(QWidget* parent, const QString& caption, const QString& directory,
                         const QString& filter);
QString chooseFileToSave(QWidget* parent, const QString& caption, const QString& suggested,
                         const QString& filter);
QString chooseFolder(QWidget* parent, const QString& caption);
void showWarning(QWidget* parent, const QString& title, const QString& message);

} // namespace inferscope::widgets
