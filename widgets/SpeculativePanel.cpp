#include "widgets/SpeculativePanel.hpp"

#include "widgets/LabJobs.hpp"
#include "widgets/TableModel.hpp"

#include <QCheckBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLocale>
#include <QPushButton>
#include <QSpinBox>
#include <QTableView>

namespace inferscope::widgets {

namespace ex = compute::experiments;

namespace {
QTableView* tableView(TableModel* model, const char* name, QWidget* parent) {
    auto* view = new QTableView(parent);
    view->setObjectName(name);
    view->setModel(model);
    view->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    view->verticalHeader()->hide();
    view->setMaximumHeight(140);
    return view;
}
} // namespace

SpeculativePanel::SpeculativePanel(QWidget* parent)
    : LabPanel("speculative", tr("Speculative decoding"),
               tr("A quantized copy of the model drafts g tokens, the model checks them in one "
                  "step and keeps the agreeing prefix plus its own next token. The speedup "
                  "the chapter's formula predicts from the measured acceptance alpha and draft "
                  "cost c (checking g + 1 tokens costs one step), the prediction with this "
                  "device's measured verify cost v(g), and the real runs: below 1, "
                  "speculation loses."),
               parent),
      acceptance_(new TableModel(this)), runs_(new TableModel(this)) {
    setAxis(Qt::Horizontal, tr("draft length g"), AxisScale::Linear);
    setAxis(Qt::Vertical, tr("speedup (x)"), AxisScale::Linear);
    addSeries(tr("chapter's formula (verify = 1 step)"), SeriesKind::Line);
    addSeries(tr("measured (real runs)"), SeriesKind::Scatter);
    addSeries(tr("break-even"), SeriesKind::DashedLine);
    addSeries(tr("this device (verify = v(g) steps)"), SeriesKind::Line);
    setEmptyHint(tr("Press \"Measure speculation\" below: the model runs as the target and as "
                    "each draft scheme, then speculates for real at g = 2, 4 and 8."));

    auto* row = new QHBoxLayout;
    row->addWidget(new QLabel(tr("Positions for alpha"), this));
    positions_ = new QSpinBox(this);
    positions_->setObjectName("speculativePositions");
    positions_->setRange(16, 1024);
    positions_->setValue(144);
    row->addWidget(positions_);
    row->addWidget(new QLabel(tr("Tokens per run"), this));
    tokens_ = new QSpinBox(this);
    tokens_->setObjectName("speculativeTokens");
    tokens_->setRange(8, 512);
    tokens_->setValue(64);
    row->addWidget(tokens_);
    everyDraft_ = new QCheckBox(tr("every draft scheme"), this);
    everyDraft_->setObjectName("speculativeEveryDraft");
    everyDraft_->setToolTip(tr("Unticked: %1 only (about half the time). Ticked: every "
                               "draft scheme, as the CLI's speculative command measures")
                                .arg(quickDrafts().join(tr(" and "))));
    row->addWidget(everyDraft_);
    controls_ = new JobControls(this, "speculative", tr("Measure speculation"));
    row->addWidget(controls_->runButton());
    row->addWidget(controls_->cancelButton());
    row->addWidget(controls_->progressLabel(), 1);
    extrasLayout()->addLayout(row);
    extrasLayout()->addWidget(tableView(acceptance_, "speculativeAcceptance", this));
    extrasLayout()->addWidget(tableView(runs_, "speculativeRuns", this));

    connect(runButton(), &QPushButton::clicked, this, [this] { run(request()); });
    connect(controls_, &JobControls::ended, this, [this](bool ok, const QString& error) {
        emit jobEnded(tr("Speculative decoding"), ok, error);
    });
}

void SpeculativePanel::attach(const PanelContext& context) {
    controls_->attach(*context.jobs);
    context.jobs->listen<ex::SpeculativeLab>(
        this, [this](const ex::SpeculativeStudyPtr& study) { setStudy(study); });
    connect(context.jobs, &LabJobs::modelLoaded, this, [this](const LoadedModelPtr& model) {
        backend_ = QString::fromStdString(model->backend);
        setStudy(nullptr);
    });
}

quint64 SpeculativePanel::run(const ex::SpeculativeRequest& request) {
    return controls_->run([&](LabJobs& jobs) { return jobs.runLab<ex::SpeculativeLab>(request); });
}

std::optional<quint64> SpeculativePanel::runScripted() {
    setPositions(kScriptPositions);
    setRunTokens(kScriptTokens);
    setEveryDraft(false);
    return run(request());
}

QString SpeculativePanel::emptyReason() const {
    return tr("speculative decoding runs a target and a draft engine on the GPU; the backend "
              "is %1")
        .arg(backend_);
}

ex::SpeculativeRequest SpeculativePanel::request() const {
    ex::SpeculativeRequest r;
    r.study.positions = std::uint32_t(positions_->value());
    r.study.runTokens = tokens_->value();
    if (!everyDraft_->isChecked()) {
        r.study.draftFormats.clear();
        for (const auto& name : quickDrafts()) r.study.draftFormats.push_back(name.toStdString());
    }
    return r;
}

const QStringList& SpeculativePanel::quickDrafts() {
    static const QStringList drafts = {"int8-row", "int4-g128"};
    return drafts;
}

void SpeculativePanel::setEveryDraft(bool every) {
    everyDraft_->setChecked(every);
}

void SpeculativePanel::setPositions(int positions) {
    positions_->setValue(positions);
}

void SpeculativePanel::setRunTokens(int tokens) {
    tokens_->setValue(tokens);
}

std::vector<compute::Table> SpeculativePanel::dataTables() const {
    return study_ ? ex::speculativeTables(*study_) : std::vector<compute::Table>{};
}

void SpeculativePanel::setStudy(ex::SpeculativeStudyPtr study) {
    study_ = std::move(study);
    const auto tables = dataTables();
    const auto* acceptance = compute::findTable(tables, "speculative-acceptance");
    const auto* formula = compute::findTable(tables, "speculative-formula");
    const auto* runs = compute::findTable(tables, "speculative-runs");
    acceptance_->setTable(acceptance ? *acceptance : compute::Table{});
    runs_->setTable(runs ? *runs : compute::Table{});
    QList<QPointF> predicted, onDevice, measured, breakEven;
    if (formula) {
        for (std::size_t r = 0; r < formula->rows.size(); ++r) {
            const double g = formula->number(r, "g");
            predicted << QPointF(g, formula->number(r, "predicted speedup"));
            if (!std::holds_alternative<std::monostate>(formula->at(r, "predicted on this device")))
                onDevice << QPointF(g, formula->number(r, "predicted on this device"));
            breakEven << QPointF(g, 1.0);
        }
    }
    if (study_)
        for (const auto& r : study_->runs)
            measured << QPointF(r.run.draftLength, study_->measuredSpeedup(r.run));
    setSeriesPoints({{Predicted, predicted},
                     {Measured, measured},
                     {BreakEven, breakEven},
                     {DevicePredicted, onDevice}});
    const auto* draft = study_ ? study_->findDraft(study_->runDraft) : nullptr;
    if (!draft) {
        setSummary({});
        return;
    }
    QLocale locale;
    QString text = tr("Draft %1: alpha %2 over %3 positions, c %4")
                       .arg(QString::fromStdString(draft->scheme))
                       .arg(locale.toString(draft->alpha(), 'f', 3))
                       .arg(draft->agrees.size())
                       .arg(locale.toString(study_->draftCost(*draft), 'f', 2));
    QStringList measuredText;
    bool identical = true;
    for (const auto& r : study_->runs) {
        measuredText << tr("%1x at g = %2")
                            .arg(locale.toString(study_->measuredSpeedup(r.run), 'f', 2))
                            .arg(r.run.draftLength);
        identical = identical && r.identicalToTarget;
    }
    if (!measuredText.isEmpty()) text += tr(" · measured ") + measuredText.join(", ");
    // Why the chapter's line and this device's part, in numbers: the verify cost.
    QStringList costs;
    for (const auto& r : study_->runs)
        if (const double v = study_->verifyCost(r.run); v > 0)
            costs << tr("v(%1) = %2").arg(r.run.draftLength).arg(locale.toString(v, 'f', 2));
    if (!costs.isEmpty())
        text += tr(" · verifying g + 1 tokens costs %1 target steps here; the chapter's "
                   "memory-bound GPU pays about 1")
                    .arg(costs.join(", "));
    if (study_->temperature == 0 && !study_->runs.empty())
        text += identical ? tr(" · output identical to the target's")
                          : tr(" · output DIFFERS from the target's");
    setSummary(text);
}

} // namespace inferscope::widgets
