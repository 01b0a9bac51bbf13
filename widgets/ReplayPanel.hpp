#pragma once
// Chapter item 7 from outside: a request mix replayed against any OpenAI-compatible server
// (another InferScope's Serve, llama.cpp's server, vLLM, SGLang) with the metrics of vLLM's
// serving benchmark (compute/experiments/replay/ReplayLab). The chart is each request's life:
// when it was sent, when its first token came, when it ended; the tables are the summary
// (mean, median, p99; throughput; goodput under the SLOs), the server's /metrics before and
// after, and one row per request, the same tables `inferscope-cli replay` prints.
#include "compute/experiments/replay/ReplayLab.hpp"
#include "widgets/JobControls.hpp"
#include "widgets/LabPanel.hpp"

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLineEdit;
class QSpinBox;

namespace inferscope::widgets {

class TableModel;

class ReplayPanel : public LabPanel {
    Q_OBJECT
public:
    enum Series { Sent, FirstToken, Done, Failed };

    explicit ReplayPanel(QWidget* parent = nullptr);
    void attach(const PanelContext& context) override;
    QString emptyReason() const override;
    // The scripted run: eight short requests against this window's model, served here.
    std::optional<quint64> runScripted() override;
    // What the controls ask for; run() starts it (0: busy).
    compute::experiments::ReplayLabRequest request() const;
    quint64 run(const compute::experiments::ReplayLabRequest& request);
    void setUrl(const QString& url);
    void setRequests(int requests);
    void setConcurrency(int concurrency);
    void setResult(const compute::experiments::ReplayLabResult& result);
    TableModel* summaryModel() const { return summary_; }
    TableModel* requestsModel() const { return requests_; }
    QPushButton* runButton() const { return controls_->runButton(); }
    std::vector<compute::Table> dataTables() const override;

private:
    std::vector<compute::Table> tables_;
    QLineEdit* url_;
    QCheckBox* serveHere_;
    QComboBox* mix_;
    QSpinBox* count_;
    QComboBox* arrivals_;
    QDoubleSpinBox* rate_;
    QSpinBox* concurrency_;
    QLineEdit* model_;
    QLineEdit* apiKey_;
    QSpinBox* ttftSlo_;
    QSpinBox* tpotSlo_;
    JobControls* controls_;
    TableModel* summary_;
    TableModel* metrics_;
    TableModel* requests_;
};

} // namespace inferscope::widgets
