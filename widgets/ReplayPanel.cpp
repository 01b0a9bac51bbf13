#include "widgets/ReplayPanel.hpp"

#include "widgets/LabJobs.hpp"
#include "widgets/PanelControls.hpp"
#include "widgets/ScaledDialogs.hpp"
#include "widgets/TableModel.hpp"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
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
    serveHere_ = new QCheckBox(tr("this window's model"), this);
    serveHere_->setObjectName("replayServeHere");
    serveHere_->setToolTip(tr("Serve the loaded model on a free loopback port for the replay "
                              "and replay against it (the address is then not used)"));
    target->addWidget(serveHere_);
    extrasLayout()->addLayout(target);
    target = new QHBoxLayout;
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
    count_ = makeSpinBox(this, "replayRequests", 1, 1024, 64);
    load->addWidget(count_);
    extrasLayout()->addLayout(load);
    load = new QHBoxLayout;
    arrivals_ = new QComboBox(this);
    arrivals_->setObjectName("replayArrivals");
    arrivals_->addItem(tr("Concurrency"));
    arrivals_->addItem(tr("Poisson rate (/s)"));
    load->addWidget(arrivals_);
    concurrency_ = makeSpinBox(this, "replayConcurrency", 1, 1024, 8);
    load->addWidget(concurrency_);
    rate_ = new QDoubleSpinBox(this);
    rate_->setObjectName("replayRate");
    rate_->setRange(0.01, 10000);
    rate_->setValue(2);
    rate_->setVisible(false);
    load->addWidget(rate_);
    load->addWidget(new QLabel(tr("SLO TTFT"), this));
    ttftSlo_ = makeSpinBox(this, "replayTtftSlo", 0, 3600000, 0);
    ttftSlo_->setSuffix(tr(" ms"));
    ttftSlo_->setSpecialValueText(tr("none"));
    load->addWidget(ttftSlo_);
    load->addWidget(new QLabel(tr("TPOT"), this));
    tpotSlo_ = makeSpinBox(this, "replayTpotSlo", 0, 3600000, 0);
    tpotSlo_->setSuffix(tr(" ms"));
    tpotSlo_->setSpecialValueText(tr("none"));
    load->addWidget(tpotSlo_);
    load->addStretch(1);
    extrasLayout()->addLayout(load);

    auto* runRow = new QHBoxLayout;
    controls_ = new JobControls(this, "replay", tr("Replay"), false);
    runRow->addWidget(controls_->runButton());
    runRow->addWidget(controls_->cancelButton());
    runRow->addWidget(controls_->progressLabel(), 1);
    extrasLayout()->addLayout(runRow);
    extrasLayout()->addWidget(makeTableView(this, "replaySummary", summary_, 200));
    extrasLayout()->addWidget(makeTableView(this, "replayServerMetrics", metrics_, 140));
    extrasLayout()->addWidget(makeTableView(this, "replayRequestsTable", requests_, 200));

    connect(arrivals_, &QComboBox::currentIndexChanged, this, [this](int index) {
        concurrency_->setVisible(index == 0);
        rate_->setVisible(index == 1);
    });
    connect(pick, &QPushButton::clicked, this, [this] {
        const QString file = chooseFileToOpen(this, tr("Request mix"), {}, tr("JSON (*.json)"));
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
    r.serveHere = serveHere_->isChecked();
    return r;
}

std::optional<quint64> ReplayPanel::runScripted() {
    auto r = request();
    r.serveHere = true;
    r.replay.rate = 0;
    r.replay.concurrency = 4;
    r.replay.mix.clear();
    const char* const prompts[] = {"What is a KV cache?", "Why does batching help?",
                                   "What is a block table?", "Why is decoding slow?"};
    for (std::uint32_t i = 0; i < 8; ++i) r.replay.mix.push_back({prompts[i % 4], 4 + i % 3});
    return run(r);
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
    return tr("nothing replayed: the scripted replay serves this window's model, which runs on "
              "the GPU engine");
}

} // namespace inferscope::widgets
