#include "widgets/SchemesPanel.hpp"

#include "compute/experiments/quantization/QuantizationLabs.hpp"
#include "widgets/LabJobs.hpp"

#include "models/quant/WeightQuantizer.hpp"
#include "widgets/TableModel.hpp"

#include <QComboBox>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QListWidget>
#include <QLocale>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QTableView>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <limits>

namespace inferscope::widgets {

namespace ex = compute::experiments;

namespace {
bool sameColumns(const compute::Table& a, const compute::Table& b) {
    return std::equal(a.columns.begin(), a.columns.end(), b.columns.begin(), b.columns.end(),
                      [](const compute::Column& x, const compute::Column& y) {
                          return x.name == y.name && x.unit == y.unit;
                      });
}

// A rerun over fewer schemes adds to the per-scheme tables ("weight-error", "quality") rather
// than wiping the schemes it left out: their earlier rows stay, in their places, re-measured
// ones are replaced. Only the same measurement merges: the same title and columns and, for
// quality, the same notes (text length, battery, reference); else the new report stands alone.
std::vector<compute::Table> mergedReport(const std::vector<compute::Table>& earlier,
                                         std::vector<compute::Table> fresh) {
    for (auto& table : fresh) {
        if (table.id != "weight-error" && table.id != "quality") continue;
        const auto* old = compute::findTable(earlier, table.id);
        if (!old || old->title != table.title || !sameColumns(*old, table) ||
            (table.id == "quality" && old->notes != table.notes))
            continue;
        auto rowOf = [](const std::vector<std::vector<compute::Cell>>& rows,
                        const compute::Cell& scheme) {
            return std::find_if(rows.begin(), rows.end(),
                                [&](const auto& row) { return row.at(0) == scheme; });
        };
        std::vector<std::vector<compute::Cell>> rows;
        for (const auto& row : old->rows) {
            const auto again = rowOf(table.rows, row.at(0));
            rows.push_back(again == table.rows.end() ? row : *again);
        }
        for (const auto& row : table.rows)
            if (rowOf(old->rows, row.at(0)) == old->rows.end()) rows.push_back(row);
        table.rows = std::move(rows);
    }
    return fresh;
}
} // namespace

QStringList SchemesPanel::allSchemes() {
    QStringList names;
    for (const auto& spec : models::standardQuantSchemes())
        names << QString::fromStdString(spec.name());
    return names;
}

SchemesPanel::SchemesPanel(QWidget* parent)
    : LabPanel("schemes", tr("Schemes"),
               tr("Each weight quantization scheme's relative error ||W - W^|| / ||W|| over "
                  "every projection matrix and, once measured, its perplexity (log scale: "
                  "lower is better), next to its bits per weight."),
               parent),
      model_(new TableModel(this)) {
    setHorizontalBars(); // long names, listed down the side
    setAxis(Qt::Horizontal, tr("scheme"), AxisScale::Category);
    setAxis(Qt::Vertical, tr("mean weight error (%)"), AxisScale::Linear);
    addSeries(tr("per scheme"), SeriesKind::Bars);
    setEmptyHint(tr("Press \"Measure weight errors\" or \"Measure quality\" below: each "
                    "ticked scheme gets a bar."));

    auto* grid = new QGridLayout;
    list_ = new QListWidget(this);
    list_->setObjectName("schemeList");
    list_->setToolTip(tr("Tick the schemes to measure; the highlighted one is the shared "
                         "selection the other panels follow"));
    for (const auto& name : allSchemes()) {
        auto* item = new QListWidgetItem(name, list_);
        item->setFlags(item->flags() | Qt::ItemIsUserCheckable);
        item->setCheckState(Qt::Checked);
    }
    list_->setMaximumHeight(150);
    grid->addWidget(list_, 0, 0, 4, 1);

    controls_ = new JobControls(this, "schemes", tr("Measure weight errors"));
    weightButton_ = controls_->runButton();
    weightButton_->setObjectName("weightReportButton");
    weightButton_->setToolTip(tr("Packs every projection matrix with each ticked scheme and "
                                 "measures ||W - W^|| / ||W|| (worker thread)"));
    qualityButton_ = new QPushButton(tr("Measure quality"), this);
    qualityButton_->setObjectName("qualityReportButton");
    qualityButton_->setToolTip(
        tr("Perplexity on the corpus, the factual battery and token "
           "agreement for each ticked scheme (worker thread; can take long)"));
    controls_->addRunButton(qualityButton_);
    auto* buttons = new QHBoxLayout;
    buttons->addWidget(weightButton_);
    buttons->addWidget(qualityButton_);
    buttons->addWidget(controls_->cancelButton());
    grid->addLayout(buttons, 0, 1);

    auto* sizes = new QHBoxLayout;
    sizes->addWidget(new QLabel(tr("Perplexity tokens"), this));
    perplexityTokens_ = new QSpinBox(this);
    perplexityTokens_->setObjectName("perplexityTokens");
    perplexityTokens_->setRange(0, 8192);
    perplexityTokens_->setValue(256);
    perplexityTokens_->setSpecialValueText(tr("skip"));
    perplexityTokens_->setToolTip(tr("How many tokens of the corpus the perplexity reads"));
    sizes->addWidget(perplexityTokens_);
    sizes->addWidget(new QLabel(tr("Battery questions"), this));
    questions_ = new QSpinBox(this);
    questions_->setObjectName("batteryQuestions");
    questions_->setRange(0, 16);
    questions_->setValue(4);
    questions_->setSpecialValueText(tr("skip"));
    questions_->setToolTip(tr("How many of the 16 factual questions to ask (greedy)"));
    sizes->addWidget(questions_);
    grid->addLayout(sizes, 1, 1);

    progress_ = new QProgressBar(this);
    progress_->setRange(0, 100);
    progress_->hide();
    grid->addWidget(progress_, 2, 1);
    grid->addWidget(controls_->progressLabel(), 3, 1);

    auto* generation = new QHBoxLayout;
    generation->addWidget(new QLabel(tr("Generate with"), this));
    generationBox_ = new QComboBox(this);
    generationBox_->setObjectName("generationScheme");
    generationBox_->addItems(allSchemes());
    generationBox_->setToolTip(tr("The weight format the GPU engine packs the model into for "
                                  "generation; schemes without a GPU kernel are analysed on the "
                                  "host only"));
    generationLabel_ = new QLabel(this);
    generationLabel_->setObjectName("generationSchemeNote");
    generation->addWidget(generationBox_);
    generation->addWidget(generationLabel_, 1);
    grid->addLayout(generation, 4, 0, 1, 2);
    extrasLayout()->addLayout(grid);

    auto* view = new QTableView(this);
    view->setObjectName("schemeTable");
    view->setModel(model_);
    view->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    view->setMaximumHeight(200);
    extrasLayout()->addWidget(view);

    connect(weightButton_, &QPushButton::clicked, this,
            [this] { runWeightReport(checkedSchemes()); });
    connect(qualityButton_, &QPushButton::clicked, this, [this] {
        runQualityReport(checkedSchemes(), perplexityTokens_->value(), questions_->value());
    });
    connect(controls_, &JobControls::progressed, this, &SchemesPanel::setProgress);
    connect(controls_, &JobControls::ended, this, [this](bool ok, const QString& error) {
        showRunning(false);
        emit jobEnded(tr("Scheme report"), ok, error);
    });
    connect(list_, &QListWidget::currentTextChanged, this, &SchemesPanel::currentSchemeChanged);
    connect(generationBox_, &QComboBox::textActivated, this, &SchemesPanel::pickGenerationScheme);
    connect(model_, &QAbstractItemModel::modelReset, this, &SchemesPanel::rebuild);
    connect(model_, &QAbstractItemModel::rowsInserted, this, &SchemesPanel::rebuild);
    rebuild();
}

QStringList SchemesPanel::checkedSchemes() const {
    QStringList names;
    for (int i = 0; i < list_->count(); ++i)
        if (list_->item(i)->checkState() == Qt::Checked) names << list_->item(i)->text();
    return names;
}

void SchemesPanel::setCheckedSchemes(const QStringList& schemes) {
    for (int i = 0; i < list_->count(); ++i)
        list_->item(i)->setCheckState(schemes.contains(list_->item(i)->text()) ? Qt::Checked
                                                                               : Qt::Unchecked);
}

QString SchemesPanel::currentScheme() const {
    return list_->currentItem() ? list_->currentItem()->text() : QString();
}

void SchemesPanel::setCurrentScheme(const QString& scheme) {
    auto found = list_->findItems(scheme, Qt::MatchExactly);
    if (!found.isEmpty() && list_->currentItem() != found.front())
        list_->setCurrentItem(found.front());
}

void SchemesPanel::setWeightReport(std::vector<compute::Table> tables) {
    weightTables_ = mergedReport(weightTables_, std::move(tables));
    model_->setTable(schemeComparisonTable(weightTables_, qualityTables_));
}

void SchemesPanel::setQualityReport(std::vector<compute::Table> tables) {
    qualityTables_ = mergedReport(qualityTables_, std::move(tables));
    model_->setTable(schemeComparisonTable(weightTables_, qualityTables_));
}

void SchemesPanel::clearReports() {
    weightTables_.clear();
    qualityTables_.clear();
    model_->setTable({});
}

void SchemesPanel::pickGenerationScheme(const QString& scheme) {
    const bool onGpu = context_.requestGenerationFormat && context_.requestGenerationFormat(scheme);
    setGenerationScheme(scheme, onGpu);
}

void SchemesPanel::showRunning(bool running) {
    progress_->setVisible(running);
    progress_->setValue(0);
}

void SchemesPanel::setProgress(const QString& line, int percent) {
    controls_->progressLabel()->setText(line);
    if (percent >= 0) progress_->setValue(percent);
}

std::vector<models::QuantSchemeSpec> SchemesPanel::parsed(const QStringList& schemes) {
    std::vector<models::QuantSchemeSpec> specs;
    for (const auto& name : schemes) specs.push_back(models::parseQuantScheme(name.toStdString()));
    return specs;
}

quint64 SchemesPanel::runWeightReport(const QStringList& schemes) {
    ex::WeightReportOptions request;
    try {
        request.schemes = parsed(schemes);
    } catch (const std::exception& error) {
        emit jobEnded(tr("Scheme report"), false, QString::fromUtf8(error.what()));
        return 0;
    }
    const auto job =
        controls_->run([&](LabJobs& jobs) { return jobs.runLab<ex::WeightReportLab>(request); });
    showRunning(job != 0);
    return job;
}

quint64 SchemesPanel::runQualityReport(const QStringList& schemes, int perplexityTokens,
                                       int questions) {
    ex::QualityRequest request;
    try {
        request.schemes = parsed(schemes);
    } catch (const std::exception& error) {
        emit jobEnded(tr("Scheme report"), false, QString::fromUtf8(error.what()));
        return 0;
    }
    request.perplexityTokens = perplexityTokens;
    request.batteryQuestions = questions;
    const auto job =
        controls_->run([&](LabJobs& jobs) { return jobs.runLab<ex::QualityReportLab>(request); });
    showRunning(job != 0);
    return job;
}

void SchemesPanel::setGenerationScheme(const QString& scheme, bool runsOnGpu) {
    QSignalBlocker block(generationBox_);
    int index = generationBox_->findText(scheme);
    if (index < 0) {
        generationBox_->addItem(scheme);
        index = generationBox_->count() - 1;
    }
    generationBox_->setCurrentIndex(index);
    generationLabel_->setText(runsOnGpu ? tr("the GPU engine runs this format")
                                        : tr("host-analysis only here: no GPU kernel for this "
                                             "scheme on this backend, generation keeps its "
                                             "format"));
}

std::vector<compute::Table> SchemesPanel::dataTables() const {
    if (model_->rowCount() == 0) return {};
    std::vector<compute::Table> tables{model_->table()};
    tables.insert(tables.end(), weightTables_.begin(), weightTables_.end());
    tables.insert(tables.end(), qualityTables_.begin(), qualityTables_.end());
    return tables;
}

void SchemesPanel::rebuild() {
    const auto& table = model_->table();
    QStringList names;
    QList<qreal> values;
    // Perplexity once measured (what quality is about), else the weight error.
    bool perplexity = false;
    for (const auto& column : table.columns) perplexity |= column.name == "perplexity";
    const char* column = perplexity ? "perplexity" : "mean error";
    const bool haveColumn = std::any_of(table.columns.begin(), table.columns.end(),
                                        [&](const compute::Column& c) { return c.name == column; });
    if (haveColumn)
        for (std::size_t row = 0; row < table.rows.size(); ++row) {
            const auto& cell = table.at(row, column);
            double value = std::numeric_limits<double>::quiet_NaN();
            if (auto* d = std::get_if<double>(&cell)) value = *d;
            if (auto* i = std::get_if<std::int64_t>(&cell)) value = double(*i);
            if (std::isnan(value)) continue;
            names << QString::fromStdString(std::get<std::string>(table.rows[row][0]));
            values << value;
        }
    // Perplexity spans orders of magnitude (one scheme at ~100,000 would flatten the rest):
    // a log axis, whose zero or negative bars ChartPanel clamps to the lower end.
    const QString axis =
        perplexity ? tr("perplexity (log scale, lower is better)") : tr("mean weight error (%)");
    if (axisTitle(Qt::Vertical) != axis)
        setAxis(Qt::Vertical, axis, perplexity ? AxisScale::Log : AxisScale::Linear);
    setBarValues(Values, names, values);
    if (names.isEmpty()) {
        setSummary(tr("Tick schemes, then measure their weight errors or their quality."));
        return;
    }
    // Perplexities differ by noise of the text as well as by scheme: the caption is the last
    // run's paired verdict (compute/experiments/quantization/PerplexityTies), never a bare
    // minimum. Weight errors are exact, so their extremes are.
    const auto* ranking = compute::findTable(qualityTables_, "quality-ranking");
    if (perplexity && ranking && !ranking->notes.empty()) {
        setSummary(tr("Perplexity: %1").arg(QString::fromStdString(ranking->notes.front())));
        return;
    }
    auto best = std::min_element(values.begin(), values.end()) - values.begin();
    auto worst = std::max_element(values.begin(), values.end()) - values.begin();
    QLocale locale;
    setSummary(tr("%1: best %2 (%3), worst %4 (%5) over %6 schemes")
                   .arg(perplexity ? tr("Perplexity") : tr("Mean weight error"))
                   .arg(names[best], locale.toString(values[best], 'g', 4), names[worst],
                        locale.toString(values[worst], 'g', 4))
                   .arg(names.size()));
}

void SchemesPanel::attach(const PanelContext& context) {
    context_ = context;
    controls_->attach(*context.jobs);
    context.jobs->listen<ex::WeightReportLab>(
        this, [this](const std::vector<compute::Table>& tables) { setWeightReport(tables); });
    context.jobs->listen<ex::QualityReportLab>(
        this, [this](const std::vector<compute::Table>& tables) { setQualityReport(tables); });
    connect(context.jobs, &LabJobs::modelLoaded, this, [this](const LoadedModelPtr& model) {
        clearReports();
        setGenerationScheme(QString::fromStdString(model->generationFormat), true);
    });
    connect(context.jobs, &LabJobs::formatSwitched, this, [this](const FormatSwitchPtr& result) {
        setGenerationScheme(QString::fromStdString(result->format), true);
    });
}

} // namespace inferscope::widgets
