#pragma once
// Chapter item 7, served live: the Serve toggle puts the loaded model behind the
// OpenAI-compatible server (compute/experiments/serve/ServeLab) and, while the class sends
// requests, draws which request held which slot over time (one bar per request from its
// admission to its end, from the requests' own times; six colours in turn), the KV block map as the
// loop last published it, and one row per request (time to first token, decode tokens/s, queue
// time, blocks held) with the server's metrics. The job holds the engine while it serves: other
// labs wait until Stop.
#include "compute/experiments/serve/ServeLab.hpp"
#include "widgets/JobControls.hpp"
#include "widgets/LabPanel.hpp"

#include <memory>

class QCheckBox;
class QLineEdit;
class QSpinBox;

namespace inferscope::widgets {

class KvBlocksPanel;
class TableModel;

class ServePanel : public LabPanel {
    Q_OBJECT
public:
    static constexpr int kRequestColours = 6;
    // Each request's time in its slot is drawn as a bar of marks, this many along the axis.
    static constexpr int kMarksAcrossTheAxis = 240;

    explicit ServePanel(QWidget* parent = nullptr);
    void attach(const PanelContext& context) override;
    QString emptyReason() const override;
    // The scripted run: serves on a free port and submits a few requests itself.
    std::optional<quint64> runScripted() override;
    // Starts serving with the controls' settings, or with `request` (0: busy or no model).
    quint64 serve();
    quint64 serve(compute::experiments::ServeRequest request);
    void stop();
    bool serving() const { return controls_->running(); }
    compute::experiments::ServeRequest request() const;
    // What the controls ask for (tests serve on port 0, any free port).
    void setPort(int port);
    QString url() const { return url_; }
    // Draws one snapshot of the loop (the job hands them on a few times a second).
    void showSnapshot(const compute::experiments::ServeSnapshot& snapshot, const QString& url);
    TableModel* requestsModel() const { return requests_; }
    TableModel* metricsModel() const { return metrics_; }
    KvBlocksPanel* blockMap() const { return blocks_; }
    QPushButton* serveButton() const { return controls_->runButton(); }
    QPushButton* stopButton() const { return controls_->cancelButton(); }
    std::vector<compute::Table> dataTables() const override;

private:
    void clear();

    QString backend_;
    QString url_;
    std::shared_ptr<const compute::experiments::ServeSnapshot> last_;
    QLineEdit* host_;
    QSpinBox* port_;
    QLineEdit* apiKey_;
    QSpinBox* slots_;
    QSpinBox* context_;
    QCheckBox* batchInvariant_;
    JobControls* controls_;
    TableModel* requests_;
    TableModel* metrics_;
    KvBlocksPanel* blocks_;
};

} // namespace inferscope::widgets
