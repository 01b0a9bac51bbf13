#pragma once
// The status bar's line: a long progress or status text is elided to the room it has (the
// whole text in its tooltip) instead of widening the window, which a plain QLabel's minimum
// width did (1280 -> 1398 px while a lab's progress line showed).
#include <QLabel>

namespace inferscope::gui {

class StatusLine : public QLabel {
public:
    explicit StatusLine(const QString& text, QWidget* parent = nullptr);
    QSize minimumSizeHint() const override;
    // The text as drawn now (elided to the width).
    QString shownText() const;

protected:
    void paintEvent(QPaintEvent* event) override;
};

} // namespace inferscope::gui
