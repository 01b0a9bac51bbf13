#include "app/gui/StatusLine.hpp"

#include <QPainter>
#include <QStyle>

namespace inferscope::gui {

StatusLine::StatusLine(const QString& text, QWidget* parent) : QLabel(text, parent) {
    // Ignored: the layout gives it what is left and never grows the window for it.
    setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
}

QSize StatusLine::minimumSizeHint() const {
    return {fontMetrics().averageCharWidth() * 8, QLabel::minimumSizeHint().height()};
}

QString StatusLine::shownText() const {
    return fontMetrics().elidedText(text(), Qt::ElideRight, contentsRect().width());
}

void StatusLine::paintEvent(QPaintEvent*) {
    QPainter painter(this);
    const QString shown = shownText();
    setToolTip(shown == text() ? QString() : text());
    style()->drawItemText(&painter, contentsRect(), alignment().toInt() | Qt::TextSingleLine,
                          palette(), isEnabled(), shown, foregroundRole());
}

} // namespace inferscope::gui
