#include "widgets/ServePanel.hpp"

#include "compute/experiments/serving/KvBlockMap.hpp"
#include "widgets/GuiThreadPost.hpp"
#include "widgets/KvBlocksPanel.hpp"
#include "widgets/LabJobs.hpp"
#include "widgets/PanelControls.hpp"
#include "widgets/TableModel.hpp"

#include <QCheckBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QPointer>
#include <QPushButton>
#include <QScrollArea>
#include <QSpinBox>
#include <QTableView>
#include <QVBoxLayout>
#include <algorithm>

namespace inferscope::widgets {

namespace ex = compute::experiments;

ServePanel::ServePanel(QWidget* parent)
    : LabPanel("serve", tr("Serve"),
               tr("The loaded model as an OpenAI-compatible server: requests from the class "
                  "join the continuous batch as they arrive. Each bar is one request holding "
                  "its slot, from admission to its last token (a colour per request, six in "
                  "turn); below, the KV blocks as the server last saw them and one row per "
                  "request."),
               parent),
      requests_(new TableModel(this)), metrics_(new TableModel(this)) {
    setAxis(Qt::Horizontal, tr("time since the server started (s)"), AxisScale::Linear);
    setAxis(Qt::Vertical, tr("slot"), AxisScale::Linear);
    for (int c = 0; c < kRequestColours; ++c) {
        addSeries(tr("requests %1, %2, %3, ...")
                      .arg(c + 1)
                      .arg(c + 1 + kRequestColours)
                      .arg(c + 1 + 2 * kRequestColours),
                  SeriesKind::Scatter);
        setSquareMarkers(c);
        setMarkerSize(c, 7);
    }
    setEmptyHint(tr("Press \"Serve\", then send requests to the address it shows, e.g. "
                    "curl http://127.0.0.1:8080/v1/completions -d '{\"prompt\": \"Hello\", "
                    "\"max_tokens\": 16}'"));

    auto* settings = new QHBoxLayout;
    settings->addWidget(new QLabel(tr("Host"), this));
    host_ = new QLineEdit(QStringLiteral("127.0.0.1"), this);
    host_->setObjectName("serveHost");
    host_->setToolTip(tr("127.0.0.1 serves this machine only; another address (0.0.0.0 for "
                         "every network) needs an API key"));
    settings->addWidget(host_);
    settings->addWidget(new QLabel(tr("Port"), this));
    port_ = makeSpinBox(this, "servePort", 0, 65535, 8080);
    port_->setToolTip(tr("0 picks a free port"));
    settings->addWidget(port_);
    settings->addWidget(new QLabel(tr("API key"), this));
    apiKey_ = new QLineEdit(this);
    apiKey_->setObjectName("serveApiKey");
    apiKey_->setEchoMode(QLineEdit::PasswordEchoOnEdit);
    apiKey_->setToolTip(tr("Clients send it as \"Authorization: Bearer KEY\"; required off "
                           "loopback"));
    settings->addWidget(apiKey_, 1);
    extrasLayout()->addLayout(settings);
    settings = new QHBoxLayout;
    settings->addWidget(new QLabel(tr("Slots"), this));
    slots_ = makeSpinBox(this, "serveSlots", 1, 64, 8);
    settings->addWidget(slots_);
    settings->addWidget(new QLabel(tr("Context"), this));
    context_ = makeSpinBox(this, "serveContext", 16, 4096, 512);
    context_->setSuffix(tr(" tokens"));
    context_->setToolTip(tr("Positions one request may hold (prompt + max_tokens); slots x "
                            "context must fit the KV cache"));
    settings->addWidget(context_);
    batchInvariant_ = new QCheckBox(tr("Batch-invariant"), this);
    batchInvariant_->setObjectName("serveBatchInvariant");
    batchInvariant_->setToolTip(
        tr("Each greedy answer equals the request served alone, whatever else is in the "
           "batch (small kernel tiles throughout: prefill and wide batches cost more). Off, "
           "a near tie can fall the other way when many requests run together."));
    settings->addWidget(batchInvariant_);
    settings->addStretch(1);
    extrasLayout()->addLayout(settings);

    auto* runRow = new QHBoxLayout;
    controls_ = new JobControls(this, "serve", tr("Serve"));
    controls_->cancelButton()->setText(tr("Stop serving"));
    runRow->addWidget(controls_->runButton());
    runRow->addWidget(controls_->cancelButton());
    runRow->addWidget(controls_->progressLabel(), 1);
    extrasLayout()->addLayout(runRow);
    extrasLayout()->addWidget(makeTableView(this, "serveRequests", requests_, 220));
    extrasLayout()->addWidget(makeTableView(this, "serveMetrics", metrics_, 160));
    // The block map is a whole panel of its own: in a scroll area, so its size does not become
    // the deck's minimum (every panel of the window would be laid out around it).
    blocks_ = new KvBlocksPanel;
    blocks_->setObjectName("serveBlockMap");
    blocks_->setMinimumHeight(420);
    auto* blockArea = new QScrollArea(this);
    blockArea->setObjectName("serveBlockMapArea");
    blockArea->setWidgetResizable(true);
    blockArea->setWidget(blocks_);
    blockArea->setMinimumHeight(160);
    extrasLayout()->addWidget(blockArea);

    connect(controls_->runButton(), &QPushButton::clicked, this, [this] { serve(); });
    connect(controls_, &JobControls::ended, this, [this](bool ok, const QString& error) {
        // Stop is how serving ends: not a failure.
        const bool stopped = !ok && error == QLatin1String("cancelled");
        emit jobEnded(tr("Serving"), ok || stopped, stopped ? QString() : error);
    });
}

ex::ServeRequest ServePanel::request() const {
    ex::ServeRequest r;
    r.host = host_->text().trimmed().toStdString();
    r.port = port_->value();
    r.apiKey = apiKey_->text().toStdString();
    r.slotCount = std::uint32_t(slots_->value());
    r.contextTokens = std::uint32_t(context_->value());
    r.batchInvariant = batchInvariant_->isChecked();
    return r;
}

void ServePanel::setPort(int port) {
    port_->setValue(port);
}

quint64 ServePanel::serve() {
    return serve(request());
}

std::optional<quint64> ServePanel::runScripted() {
    auto r = request();
    r.host = "127.0.0.1";
    r.port = 0;
    r.scriptedRequests = 8;
    return serve(std::move(r));
}

quint64 ServePanel::serve(ex::ServeRequest r) {
    r.onSnapshot = [self = QPointer<ServePanel>(this)](
                       std::shared_ptr<const ex::ServeSnapshot> snapshot, const std::string& url) {
        // The job's thread: drawn on the GUI thread, if the panel still exists.
        postToWidget(self, [snapshot = std::move(snapshot), url = QString::fromStdString(url)](
                               ServePanel& panel) { panel.showSnapshot(*snapshot, url); });
    };
    const quint64 id = controls_->run([&r](LabJobs& jobs) { return jobs.runLab<ex::ServeLab>(r); });
    if (id != 0) clear();
    return id;
}

void ServePanel::stop() {
    controls_->cancel();
}

void ServePanel::showSnapshot(const ex::ServeSnapshot& snapshot, const QString& url) {
    url_ = url;
    last_ = std::make_shared<const ex::ServeSnapshot>(snapshot);
    // Bars from the requests' own times (arrival + queue to arrival + elapsed), so a request
    // shorter than the interval between snapshots is still drawn.
    QList<QPointF> bars[kRequestColours];
    const double spacing = std::max(snapshot.uptimeSeconds, 1e-3) / kMarksAcrossTheAxis;
    for (const auto& row : snapshot.requests) {
        if (row.slot < 0) continue;
        auto& points = bars[(row.id - 1) % kRequestColours];
        const double start = row.arrivalSeconds + row.queueSeconds;
        const double end = row.arrivalSeconds + row.elapsedSeconds;
        for (double t = start; t < end; t += spacing) points << QPointF(t, row.slot);
        points << QPointF(end, row.slot);
    }
    std::vector<std::pair<int, QList<QPointF>>> updates;
    for (int c = 0; c < kRequestColours; ++c) updates.push_back({c, bars[c]});
    setSeriesPoints(updates);
    requests_->setTable(ex::serveRequestsTable(snapshot));
    metrics_->setTable(ex::serveMetricsTable(snapshot));
    auto blocks = snapshot.blocks;
    blocks.label = "step " + std::to_string(snapshot.step);
    blocks_->setTables(ex::kvBlockMapTables({blocks}));
    const auto& m = snapshot.metrics;
    QLocale locale;
    setSummary(tr("%1 · %2 running, %3 waiting · %4 requests, %5 tokens generated · KV blocks "
                  "%6 of %7 in use (%8%), %9 prompt tokens shared")
                   .arg(url)
                   .arg(m.running)
                   .arg(m.waiting)
                   .arg(m.requestsAdmitted)
                   .arg(m.generatedTokens)
                   .arg(m.blocksUsed())
                   .arg(m.blocksCapacity)
                   .arg(locale.toString(m.kvUsageRatio() * 100.0, 'f', 0))
                   .arg(m.sharedPromptTokens));
}

void ServePanel::clear() {
    url_.clear();
    last_.reset();
    std::vector<std::pair<int, QList<QPointF>>> updates;
    for (int c = 0; c < kRequestColours; ++c) updates.push_back({c, {}});
    setSeriesPoints(updates);
    requests_->setTable({});
    metrics_->setTable({});
    blocks_->clear();
    setSummary({});
}

std::vector<compute::Table> ServePanel::dataTables() const {
    if (!last_) return {};
    std::vector<compute::Table> tables{ex::serveRequestsTable(*last_),
                                       ex::serveMetricsTable(*last_)};
    for (auto& table : blocks_->dataTables()) tables.push_back(std::move(table));
    return tables;
}

void ServePanel::attach(const PanelContext& context) {
    controls_->attach(*context.jobs);
    connect(context.jobs, &LabJobs::modelLoaded, this, [this](const LoadedModelPtr& model) {
        backend_ = QString::fromStdString(model->backend);
        clear();
    });
}

QString ServePanel::emptyReason() const {
    return tr("nothing served: the server waits for clients (press Serve and send requests); it "
              "runs on the GPU engine (backend now: %1)")
        .arg(backend_.isEmpty() ? tr("none loaded") : backend_);
}

} // namespace inferscope::widgets
