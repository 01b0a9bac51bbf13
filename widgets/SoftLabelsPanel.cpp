#include "widgets/SoftLabelsPanel.hpp"

#include "widgets/TableModel.hpp"

#include "models/quant/WeightQuantizer.hpp"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QPushButton>
#include <QSlider>
#include <QSpinBox>
#include <QTableView>

#include <cmath>

namespace inferscope::widgets {

namespace ex = compute::experiments;

SoftLabelsPanel::SoftLabelsPanel(QWidget* parent)
    : LabPanel("soft-labels", tr("Soft labels"),
               tr("The next token's probabilities after a prompt at temperature T "
                  "(softmax of logits / T): the hard label is only the first bar. Raising T "
                  "takes the T-th root of every ratio between bars."),
               parent),
      divergence_(new TableModel(this)) {
    setAxis(Qt::Horizontal, tr("next token"), AxisScale::Category);
    setAxis(Qt::Vertical, tr("probability"), AxisScale::Linear);
    addSeries(tr("probability at T"), SeriesKind::Bars);
    setEmptyHint(tr("Press \"Next-token distribution\" below: the reference and each scheme "
                    "run the prompt once."));
    auto* row = new QHBoxLayout;
    prompt_ = new QLineEdit(QString::fromStdString(ex::SoftLabelRequest{}.prompt), this);
    prompt_->setObjectName("softLabelsPrompt");
    row->addWidget(prompt_, 3);
    controls_ = new JobControls(this, "softLabels", tr("Next-token distribution"));
    row->addWidget(controls_->runButton());
    row->addWidget(controls_->cancelButton());
    row->addWidget(new QLabel(tr("T"), this));
    slider_ = new QSlider(Qt::Horizontal, this);
    slider_->setObjectName("softLabelsTemperature");
    slider_->setRange(25, 400);
    slider_->setValue(100);
    slider_->setToolTip(tr("Temperature, 0.25 to 4: redraws from the cached logits"));
    row->addWidget(slider_, 2);
    row->addWidget(new QLabel(tr("Top"), this));
    top_ = new QSpinBox(this);
    top_->setObjectName("softLabelsTop");
    top_->setRange(3, 32);
    top_->setValue(8);
    row->addWidget(top_);
    extrasLayout()->addLayout(row);
    extrasLayout()->addWidget(controls_->progressLabel());
    auto* view = new QTableView(this);
    view->setObjectName("schemeDivergence");
    view->setModel(divergence_);
    view->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    view->verticalHeader()->hide();
    view->setMaximumHeight(150);
    extrasLayout()->addWidget(view);
    connect(controls_->runButton(), &QPushButton::clicked, this, [this] {
        QStringList names;
        for (const auto& scheme : ex::defaultSoftLabelSchemes())
            names << QString::fromStdString(scheme.name());
        run(names);
    });
    connect(controls_, &JobControls::ended, this,
            [this](bool ok, const QString& error) { emit jobEnded(tr("Soft labels"), ok, error); });
    connect(slider_, &QSlider::valueChanged, this, &SoftLabelsPanel::rebuild);
    connect(top_, &QSpinBox::valueChanged, this, &SoftLabelsPanel::rebuild);
    rebuild();
}

void SoftLabelsPanel::attach(const PanelContext& context) {
    controls_->attach(*context.jobs);
    context.jobs->listen<ex::SoftLabelsLab>(
        this, [this](const ex::NextTokenDistributionPtr& labels) { setDistribution(labels); });
    connect(context.jobs, &LabJobs::modelLoaded, this, [this] { setDistribution(nullptr); });
}

quint64 SoftLabelsPanel::run(const QStringList& schemes) {
    ex::SoftLabelRequest request;
    request.prompt = prompt().toStdString();
    try {
        for (const auto& name : schemes)
            request.schemes.push_back(models::parseQuantScheme(name.toStdString()));
    } catch (const std::exception& error) {
        emit jobEnded(tr("Soft labels"), false, QString::fromUtf8(error.what()));
        return 0;
    }
    return controls_->run([&](LabJobs& jobs) { return jobs.runLab<ex::SoftLabelsLab>(request); });
}

std::optional<quint64> SoftLabelsPanel::runScripted() {
    return run({"int8-row", "int4-g128"});
}

void SoftLabelsPanel::setDistribution(ex::NextTokenDistributionPtr labels) {
    labels_ = std::move(labels);
    divergence_->setTable(labels_ && !labels_->schemes.empty() ? ex::schemeDivergenceTable(*labels_)
                                                               : compute::Table{});
    rebuild();
}

double SoftLabelsPanel::temperature() const {
    return slider_->value() / 100.0;
}

void SoftLabelsPanel::setTemperature(double temperature) {
    slider_->setValue(int(std::lround(temperature * 100)));
}

QString SoftLabelsPanel::prompt() const {
    return prompt_->text();
}

std::vector<compute::Table> SoftLabelsPanel::dataTables() const {
    if (!labels_) return {};
    // The chapter's two temperatures, and the slider's when it is elsewhere.
    std::vector<double> temperatures{1.0, 2.0};
    if (temperature() != 1.0 && temperature() != 2.0) temperatures.push_back(temperature());
    std::vector<compute::Table> tables{
        ex::softLabelTable(*labels_, temperatures, std::size_t(top_->value())),
        ex::softLabelSummaryTable(*labels_, temperatures)};
    if (!labels_->schemes.empty()) tables.push_back(ex::schemeDivergenceTable(*labels_));
    return tables;
}

void SoftLabelsPanel::rebuild() {
    if (!labels_) {
        setBarValues(Probability, {}, {});
        setSummary({});
        return;
    }
    const double t = temperature();
    const auto table = ex::softLabelTable(*labels_, {t}, std::size_t(top_->value()));
    QStringList tokens;
    QList<qreal> p;
    for (std::size_t r = 0; r < table.rows.size(); ++r) {
        tokens << QString("'%1'").arg(
            QString::fromStdString(std::get<std::string>(table.at(r, "token"))));
        p << table.number(r, table.columns.back().name);
    }
    setBarValues(Probability, tokens, p);
    const auto summary = ex::softLabelSummaryTable(*labels_, {1.0, t});
    QLocale locale;
    setSummary(
        tr("T = %1: entropy %2 bits · top-1 / top-3 = %3 (T = 1: %4; %4^(1/T) = %5)")
            .arg(locale.toString(t, 'f', 2))
            .arg(locale.toString(summary.number(1, "entropy"), 'f', 2))
            .arg(locale.toString(summary.number(1, "top-1 / top-3"), 'f', 3))
            .arg(locale.toString(summary.number(0, "top-1 / top-3"), 'f', 3))
            .arg(locale.toString(summary.number(1, "ratio at T = 1, to the power 1/T"), 'f', 3)));
}

} // namespace inferscope::widgets
