#include "widgets/ClassReportPanel.hpp"

#include "compute/experiments/report/ReportHtml.hpp"
#include "widgets/ReportPdf.hpp"
#include "widgets/ScaledDialogs.hpp"
#include "widgets/TableModel.hpp"

#include <QAction>
#include <QCheckBox>
#include <QComboBox>
#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QSaveFile>
#include <QTableView>

namespace inferscope::widgets {

namespace ex = compute::experiments;

ClassReportPanel::ClassReportPanel(QWidget* parent)
    : LabPanel("class-report", tr("Class report"),
               tr("Every chapter lab on the loaded model, written as one self-contained HTML "
                  "file (and a PDF): for each of the chapter's 14 items its figure beside this "
                  "machine's measurement and a sentence, computed from the numbers, on whether "
                  "they agree. The chart shows how long each item's labs took."),
               parent),
      summary_(new TableModel(this)) {
    setAxis(Qt::Horizontal, tr("chapter item"), AxisScale::Category);
    setAxis(Qt::Vertical, tr("wall time (s)"), AxisScale::Linear);
    addSeries(tr("wall time per item"), SeriesKind::Bars);
    setEmptyHint(tr("File > Class report... runs every lab and writes the report."));

    reportAction_ = new QAction(tr("Class &report..."), this);
    reportAction_->setObjectName("classReportAction");
    reportAction_->setToolTip(tr("Run every chapter lab and write one HTML report (and a PDF)"));
    connect(reportAction_, &QAction::triggered, this, &ClassReportPanel::chooseFileAndWrite);

    auto* row = new QHBoxLayout;
    row->addWidget(new QLabel(tr("Profile"), this));
    profile_ = new QComboBox(this);
    profile_->setObjectName("classReportProfile");
    profile_->addItem(tr("quick (a few minutes)"), QStringLiteral("quick"));
    profile_->addItem(tr("full (the chapter's sizes)"), QStringLiteral("full"));
    row->addWidget(profile_);
    pdf_ = new QCheckBox(tr("also PDF"), this);
    pdf_->setObjectName("classReportPdf");
    pdf_->setChecked(true);
    row->addWidget(pdf_);
    controls_ = new JobControls(this, "classReport", tr("Write class report..."));
    row->addWidget(controls_->runButton());
    row->addWidget(controls_->cancelButton());
    row->addWidget(controls_->progressLabel(), 1);
    extrasLayout()->addLayout(row);
    auto* view = new QTableView(this);
    view->setObjectName("classReportSummary");
    view->setModel(summary_);
    view->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    view->verticalHeader()->hide();
    view->setMaximumHeight(220);
    extrasLayout()->addWidget(view);

    connect(controls_->runButton(), &QPushButton::clicked, this,
            &ClassReportPanel::chooseFileAndWrite);
    connect(controls_, &JobControls::ended, this, [this](bool ok, const QString& error) {
        if (!ok) pendingHtml_.clear(); // cancelled or failed: nothing is written
        emit jobEnded(tr("Class report"), ok, error);
    });
}

void ClassReportPanel::attach(const PanelContext& context) {
    controls_->attach(*context.jobs);
    context.jobs->listen<ex::ClassReportLab>(this, [this](const ex::ClassReport& report) {
        setReport(report);
        if (!pendingHtml_.isEmpty()) writeFiles(report);
    });
    connect(context.jobs, &LabJobs::modelLoaded, this, [this](const LoadedModelPtr& model) {
        modelPath_ = model ? QString::fromStdString(model->path.string()) : QString();
    });
}

std::optional<quint64> ClassReportPanel::runScripted() {
    return writeReport({}, {13, 14});
}

QString ClassReportPanel::emptyReason() const {
    return tr("no report written yet: ") + emptyHint();
}

void ClassReportPanel::chooseFileAndWrite() {
    const QString path = chooseFileToSave(this, tr("Write the class report"),
                                          QStringLiteral("class-report.html"), tr("HTML (*.html)"));
    if (!path.isEmpty()) writeReport(path);
}

quint64 ClassReportPanel::writeReport(const QString& htmlPath, const std::set<int>& items) {
    ex::ClassReportRequest request;
    request.profile = ex::reportProfile(profile_->currentData().toString().toStdString());
    request.items = items;
    if (!modelPath_.isEmpty()) request.modelFile = modelPath_.toStdString();
    request.commandLine =
        QCoreApplication::arguments().join(' ').toStdString() + " (window: File > Class report...)";
    const quint64 job =
        controls_->run([&](LabJobs& jobs) { return jobs.runLab<ex::ClassReportLab>(request); });
    if (job) pendingHtml_ = htmlPath;
    return job;
}

void ClassReportPanel::writeFiles(const ex::ClassReport& report) {
    const QString html = pendingHtml_;
    pendingHtml_.clear();
    QSaveFile file(html); // written aside and renamed on commit: never a partial report
    QString error;
    if (!file.open(QIODevice::WriteOnly) ||
        file.write(QByteArray::fromStdString(ex::renderReportHtml(report))) < 0 || !file.commit())
        error = tr("cannot write %1: %2").arg(html, file.errorString());
    if (error.isEmpty() && pdf_->isChecked()) {
        const QFileInfo info(html);
        const QString pdf = info.dir().filePath(info.completeBaseName() + ".pdf");
        writeReportPdf(report, pdf, &error);
    }
    if (error.isEmpty()) lastWritten_ = html;
    emit jobEnded(tr("Class report written to %1").arg(html), error.isEmpty(), error);
}

void ClassReportPanel::setReport(const ex::ClassReport& report) {
    report_ = report;
    const auto tables = ex::ClassReportLab::tables(report);
    summary_->setTable(tables[1]);
    QStringList items;
    QList<qreal> seconds;
    for (const auto& s : report.sections) {
        items << QString::number(s.chapter.item);
        seconds << s.wallSeconds;
    }
    setBarValues(WallTime, items, seconds);
    std::size_t agree = 0;
    for (const auto& s : report.sections) agree += s.agreement == ex::Agreement::Agrees;
    setSummary(tr("%1 of %2 items agree with the chapter; %3 s in all (profile %4)")
                   .arg(agree)
                   .arg(report.sections.size())
                   .arg(report.totalSeconds, 0, 'f', 1)
                   .arg(QString::fromStdString(report.profile)));
}

std::vector<compute::Table> ClassReportPanel::dataTables() const {
    if (!report_) return {};
    return ex::ClassReportLab::tables(*report_);
}

} // namespace inferscope::widgets
