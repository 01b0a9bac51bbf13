#pragma once
// The mouse wheel changes a spin box, combo box or slider only when it has the keyboard focus:
// scrolling down the controls column over an unfocused "Repetition penalty" box used to change
// it (1.00 -> 0.50) without a word. Installed once on the application by the window; the wheel
// over an unfocused control goes on to its parent, so the scroll area scrolls instead.
#include <QObject>

class QWidget;

namespace inferscope::gui {

class WheelGuard : public QObject {
public:
    using QObject::QObject;
    // Whether widget is a control whose value the wheel changes.
    static bool guards(const QObject* widget);
    // Installs a guard (owned by window) on the application, and sets the focus policy of
    // the controls window already holds (some are polished while the window is built).
    static void install(QWidget* window);

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;
};

} // namespace inferscope::gui
