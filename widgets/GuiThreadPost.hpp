#pragma once
// Hands work from a job's thread to the GUI thread, for a widget that may be gone by then.
#include <QCoreApplication>
#include <QPointer>

#include <utility>

namespace inferscope::widgets {

// Queues `work(widget)` on the GUI thread, to run only if the widget still lives then. Callable
// from any thread: the guard is only copied there and read on the GUI thread. (Taking the
// guard's pointer on the job's thread raced with the widget's destruction on the GUI thread,
// and UBSan caught the downcast of a half-destroyed ServePanel.)
template <class Widget, class Work> void postToWidget(QPointer<Widget> guard, Work work) {
    auto* application = QCoreApplication::instance();
    if (!application) return;
    QMetaObject::invokeMethod(
        application,
        [guard = std::move(guard), work = std::move(work)] {
            if (guard) work(*guard);
        },
        Qt::QueuedConnection);
}

} // namespace inferscope::widgets
