#include "app/gui/WheelGuard.hpp"

#include <QAbstractSlider>
#include <QAbstractSpinBox>
#include <QApplication>
#include <QComboBox>
#include <QEvent>
#include <QScrollBar>

namespace inferscope::gui {

bool WheelGuard::guards(const QObject* widget) {
    // A scroll bar is a slider too, but scrolling is its job (a scroll area hands it the wheel).
    return qobject_cast<const QAbstractSpinBox*>(widget) ||
           qobject_cast<const QComboBox*>(widget) ||
           (qobject_cast<const QAbstractSlider*>(widget) &&
            !qobject_cast<const QScrollBar*>(widget));
}

namespace {
// Qt::WheelFocus (a spin box's default) would hand the control the focus on the first turn of
// the wheel: a click or Tab gives it, the wheel does not.
void refuseWheelFocus(QWidget* control) {
    if (control->focusPolicy() == Qt::WheelFocus) control->setFocusPolicy(Qt::StrongFocus);
}
} // namespace

void WheelGuard::install(QWidget* window) {
    qApp->installEventFilter(new WheelGuard(window));
    for (auto* widget : window->findChildren<QWidget*>())
        if (guards(widget)) refuseWheelFocus(widget);
}

bool WheelGuard::eventFilter(QObject* watched, QEvent* event) {
    if (event->type() == QEvent::Polish && guards(watched)) {
        refuseWheelFocus(static_cast<QWidget*>(watched)); // a control made later
    } else if (event->type() == QEvent::Wheel && guards(watched) &&
               !static_cast<QWidget*>(watched)->hasFocus()) {
        // Unaccepted and filtered out: QApplication offers the event to the parents in turn.
        event->ignore();
        return true;
    }
    return QObject::eventFilter(watched, event);
}

} // namespace inferscope::gui
