#include "widgets/ReplayPanel.hpp"

#include "widgets/LabJobs.hpp"
#include "widgets/TableModel.hpp"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QPushButton>
#include <QSpinBox>
#include <QTableView>
#include <QVBoxLayout>

namespace inferscope::widgets {

namespace ex = compute::experiments;

namespace {
QTableView* tableView(QWidget* parent, const char* name, TableModel* model, int height) {
    auto* view = new QTableView(parent);
    view->setObjectName(name);
    view->setModel(model);
    view->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    view->setMaximumHeight(height);
    return view;
}

QSpinBox* spinBox(QWidget* parent, const char* name, int low, int high, int value) {
    auto* box = new QSpinBox(parent);
    box->setObjectName(name);
    box->setRange(low, high);
    box->setValue(value);
    return box;
}
} // namespace

ReplayPanel::ReplayPanel(QWidget* parent)
    : LabPanel("replay", tr("Replay"),
               tr("A request mix sent to an OpenAI-compatible server (any engine, measured from "
                  "outside). Each request is a row: sent, its first token (TTFT after sending) "
                  "and its last (end-to-end latency). TPOT = (E2EL - TTFT) / (n - 1), as "
                  "vLLM's serving benchmark defines it."),
               parent),
      summary_(new TableModel(this)), metrics_(new TableModel(this)),
      requests_(new TableModel(this)) {
    setAxis(Qt::Horizontal, tr("time since the replay began (s)"), AxisScale::Linear);
    setAxis(Qt::Vertical, tr("request (in arrival order)"), AxisScale::Linear);
    addSeries(tr("sent"), SeriesKind::Scatter);
    addSeries(tr("first token"), SeriesKind::Scatter);
    addSeries(tr("last token"), SeriesKind::Scatter);
    addSeries(tr("failed"), SeriesKind::Scatter);
    setSeriesColour(Failed, QColor(0xC0, 0x39, 0x2B));
    setEmptyHint(tr("Give a server's address (e.g. another InferScope's Serve, or llama.cpp's "
                    "llama-server) and press \"Replay\"."));

    auto* target = new QHBoxLayout;
    target->addWidget(new QLabel(tr("Server"), this));
    url_ = new QLineEdit(QStringLiteral("http://127.0.0.1:8080"), this);
    url_->setObjectName("replayUrl");
    target->addWidget(url_, 2);
    target->addWidget(new QLabel(tr("Model"), this));
    model_ = new QLineEdit(this);
    model_->setObjectName("replayModel");
    model_->setPlaceholderText(tr("the server's first"));
    target->addWidget(model_, 1);
    target->addWidget(new QLabel(tr("API key"), this));
    apiKey_ = new QLineEdit(this);
    apiKey_->setObjectName("replayApiKey");
    apiKey_->setEchoMode(QLineEdit::PasswordEchoOnEdit);
    target->addWidget(apiKey_, 1);
    extrasLayout()->addLayout(target);

    auto* load = new QHBoxLayout;
    load->addWidget(new QLabel(tr("Mix"), this));
    mix_ = new QComboBox(this);
    mix_->setObjectName("replayMix");
    mix_->addItem(tr("the chapter's"), QStringLiteral("chapter"));
    load->addWidget(mix_, 1);
    auto* pick = new QPushButton(tr("Mix file..."), this);
    pick->setObjectName("replayMixFile");
    load->addWidget(pick);
    load->addWidget(new QLabel(tr("Requests"), this));
    count_ = spinBox(this, "replayRequests", 1, 1024, 64);
    load->addWidget(count_);
    arrivals_ = new QComboBox(this);
    arrivals_->setObjectName("replayArrivals");
    arrivals_->addItem(tr("Concurrency"));
    arrivals_->addItem(tr("Poisson rate (/s)"));
    load->addWidget(arrivals_);
    concurrency_ = spinBox(this, "replayConcurrency", 1, 1024, 8);
    load->addWidget(concurrency_);
    rate_ = new QDoubleSpinBox(this);
    rate_->setObjectName("replayRate");
    rate_->setRange(0.01, 10000);
    rate_->setValue(2);
    rate_->setVisible(false);
    load->addWidget(rate_);
    load->addWidget(new QLabel(tr("SLO TTFT"), this));
    ttftSlo_ = spinBox(this, "replayTtftSlo", 0, 3600000, 0);
    ttftSlo_->setSuffix(tr(" ms"));
    ttftSlo_->setSpecialValueText(tr("none"));
    load->addWidget(ttftSlo_);
    load->addWidget(new QLabel(tr("TPOT"), this));
    tpotSlo_ = spinBox(this, "replayTpotSlo", 0, 3600000, 0);
    tpotSlo_->setSuffix(tr(" ms"));
    tpotSlo_->setSpecialValueText(tr("none"));
    load->addWidget(tpotSlo_);
    extrasLayout()->addLayout(load);

    auto* runRow = new QHBoxLayout;
    controls_ = new JobControls(this, "replay", tr("Replay"), false);
    runRow->addWidget(controls_->runButton());
    runRow->addWidget(controls_->cancelButton());
    runRow->addWidget(controls_->progressLabel(), 1);
    extrasLayout()->addLayout(runRow);
    extrasLayout()->addWidget(tableView(this, "replaySummary", summary_, 200));
    extrasLayout()->addWidget(tableView(this, "replayServerMetrics", metrics_, 140));
    extrasLayout()->addWidget(tableView(this, "replayRequestsTable", requests_, 200));

    connect(arrivals_, &QComboBox::currentIndexChanged, this, [this](int index) {
        concurrency_->setVisible(index == 0);
        rate_->setVisible(index == 1);
    });
    connect(pick, &QPushButton::clicked, this, [this] {
        const QString file =
            QFileDialog::getOpenFileName(this, tr("Request mix"), {}, tr("JSON (*.json)"));
        if (file.isEmpty()) return;
        mix_->addItem(file, file);
        mix_->setCurrentIndex(mix_->count() - 1);
    });
    connect(controls_->runButton(), &QPushButton::clicked, this, [this] { run(request()); });
    connect(controls_, &JobControls::ended, this,
            [this](bool ok, const QString& error) { emit jobEnded(tr("Replay"), ok, error); });
}

ex::ReplayLabRequest ReplayPanel::request() const {
    ex::ReplayLabRequest r;
    r.replay.url = url_->text().trimmed().toStdString();
    r.replay.model = model_->text().trimmed().toStdString();
    r.replay.apiKey = apiKey_->text().toStdString();
    if (arrivals_->currentIndex() == 1)
        r.replay.rate = rate_->value();
    else
        r.replay.concurrency = std::uint32_t(concurrency_->value());
    if (ttftSlo_->value() > 0) r.replay.slo.ttftMs = ttftSlo_->value();
    if (tpotSlo_->value() > 0) r.replay.slo.tpotMs = tpotSlo_->value();
    r.mixName = mix_->currentData().toString().toStdString();
    r.requests = std::uint32_t(count_->value());
    return r;
}

quint64 ReplayPanel::run(const ex::ReplayLabRequest& request) {
    return controls_->run(
        [&request](LabJobs& jobs) { return jobs.runLab<ex::ReplayLab>(request); });
}

void ReplayPanel::setUrl(const QString& url) {
    url_->setText(url);
}

void ReplayPanel::setRequests(int requests) {
    count_->setValue(requests);
}

void ReplayPanel::setConcurrency(int concurrency) {
    arrivals_->setCurrentIndex(0);
    concurrency_->setValue(concurrency);
}

void ReplayPanel::setResult(const ex::ReplayLabResult& result) {
    tables_ = ex::ReplayLab::tables(result);
    summary_->setTable(tables_[0]);
    metrics_->setTable(tables_[1]);
    requests_->setTable(tables_[2]);
    QList<QPointF> sent, first, done, failed;
    for (const auto& record : result.result.records) {
        const double y = record.index + 1;
        if (!record.ok) {
            failed << QPointF(record.sentSeconds, y);
            continue;
        }
        sent << QPointF(record.sentSeconds, y);
        first << QPointF(record.sentSeconds + record.ttftSeconds, y);
        done << QPointF(record.sentSeconds + record.e2elSeconds, y);
    }
    setSeriesPoints({{Sent, sent}, {FirstToken, first}, {Done, done}, {Failed, failed}});
    const auto& s = result.result.summary;
    QLocale locale;
    QString text = tr("%1 of %2 requests · %3 output tokens/s · TTFT median %4 ms, p99 %5 ms · "
                      "TPOT median %6 ms")
                       .arg(s.completed)
                       .arg(s.completed + s.failed)
                       .arg(locale.toString(s.outputThroughput, 'f', 1))
                       .arg(locale.toString(s.ttft.median, 'f', 0))
                       .arg(locale.toString(s.ttft.p99, 'f', 0))
                       .arg(locale.toString(s.tpot.median, 'f', 1));
    if (result.request.slo.ttftMs || result.request.slo.tpotMs)
        text += tr(" · goodput %1 requests/s (%2 met the SLOs)")
                    .arg(locale.toString(s.goodput, 'f', 2))
                    .arg(s.metSlo);
    setSummary(text);
}

std::vector<compute::Table> ReplayPanel::dataTables() const {
    return tables_;
}

void ReplayPanel::attach(const PanelContext& context) {
    controls_->attach(*context.jobs);
    context.jobs->listen<ex::ReplayLab>(
        this, [this](const ex::ReplayLabResult& result) { setResult(result); });
}

QString ReplayPanel::emptyReason() const {
    return tr("nothing replayed: a replay needs a server to send requests to (the scripted run "
              "starts none)");
}

} // namespace inferscope::widgets
