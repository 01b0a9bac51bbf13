#include "widgets/ScaledDialogs.hpp"

#include <QFileDialog>
#include <QMessageBox>

namespace inferscope::widgets {

namespace {
QString runFileDialog(QWidget* parent, QFileDialog::FileMode mode, QFileDialog::AcceptMode accept,
                      const QString& caption, const QString& start, const QString& filter) {
    QFileDialog dialog(parent, caption, start, filter);
    dialog.setOption(QFileDialog::DontUseNativeDialog);
    dialog.setFileMode(mode);
    dialog.setAcceptMode(accept);
    if (mode == QFileDialog::Directory) dialog.setOption(QFileDialog::ShowDirsOnly);
    if (parent) dialog.setFont(parent->font());
    if (dialog.exec() != QDialog::Accepted || dialog.selectedFiles().isEmpty()) return {};
    return dialog.selectedFiles().front();
}
} // namespace

QString chooseFileToOpen(QWidget* parent, const QString& caption, const QString& directory,
                         const QString& filter) {
    return runFileDialog(parent, QFileDialog::ExistingFile, QFileDialog::AcceptOpen, caption,
                         directory, filter);
}

QString chooseFileToSave(QWidget* parent, const QString& caption, const QString& suggested,
                         const QString& filter) {
    return runFileDialog(parent, QFileDialog::AnyFile, QFileDialog::AcceptSave, caption, suggested,
                         filter);
}

QString chooseFolder(QWidget* parent, const QString& caption) {
    return runFileDialog(parent, QFileDialog::Directory, QFileDialog::AcceptOpen, caption, {}, {});
}

void showWarning(QWidget* parent, const QString& title, const QString& message) {
    QMessageBox box(QMessageBox::Warning, title, message, QMessageBox::Ok, parent);
    if (parent) box.setFont(parent->font());
    box.exec();
}

} // namespace inferscope::widgets
