// Draws the application icon once from one table of shapes and writes it
// twice: as SVG (the scalable icon) and as a 256x256 PNG. The picture is a
// sorted distribution as the stage plots draw it: kept bars in blue, the
// chosen token in vermillion with a heavy outline, truncated ones in grey
// (the colours of ui/common/palette.h).
//
// usage: samplescope_make_icon OUT.svg OUT.png
#include <fstream>
#include <iostream>

#include <QColor>
#include <QImage>
#include <QPainter>
#include <QPainterPath>
#include <QString>

namespace {

constexpr int kSize = 256;  // the SVG's view box and the PNG's pixels

struct Shape {
    double x, y, width, height, radius;
    const char* fill;    // "#rrggbb", or "none"
    const char* stroke;  // "#rrggbb", or "none"
    double stroke_width;
};

constexpr double kBase = 198.0;  // the bars' foot
constexpr Shape kShapes[] = {
    {16, 16, 224, 224, 44, "#F4F1EA", "#2B2B2B", 6},                 // the tile
    {48, kBase - 130, 26, 130, 3, "#0072B2", "none", 0},             // kept
    {82, kBase - 98, 26, 98, 3, "#D55E00", "#000000", 5},            // the chosen token
    {116, kBase - 68, 26, 68, 3, "#0072B2", "none", 0},              // kept
    {150, kBase - 42, 26, 42, 3, "#999999", "none", 0},              // dropped
    {184, kBase - 24, 26, 24, 3, "#999999", "none", 0},              // dropped
    {40, kBase, 176, 6, 3, "#2B2B2B", "none", 0},                    // the axis
};

QString number(double value) { return QString::number(value, 'g', 6); }

QString svg() {
    QString out = QStringLiteral(
                      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%1\" height=\"%1\" viewBox=\"0 0 %1 %1\">\n")
                      .arg(kSize);
    for (const Shape& shape : kShapes) {
        out += QStringLiteral("  <rect x=\"%1\" y=\"%2\" width=\"%3\" height=\"%4\" rx=\"%5\" fill=\"%6\"")
                   .arg(number(shape.x), number(shape.y), number(shape.width), number(shape.height),
                        number(shape.radius), QString::fromLatin1(shape.fill));
        if (shape.stroke_width > 0) {
            out += QStringLiteral(" stroke=\"%1\" stroke-width=\"%2\"")
                       .arg(QString::fromLatin1(shape.stroke), number(shape.stroke_width));
        }
        out += QStringLiteral("/>\n");
    }
    out += QStringLiteral("</svg>\n");
    return out;
}

QImage png() {
    QImage image(kSize, kSize, QImage::Format_ARGB32_Premultiplied);
    image.fill(Qt::transparent);
    QPainter painter(&image);
    painter.setRenderHint(QPainter::Antialiasing);
    for (const Shape& shape : kShapes) {
        // As in SVG, the stroke is centred on the outline.
        QPainterPath path;
        path.addRoundedRect(QRectF(shape.x, shape.y, shape.width, shape.height), shape.radius, shape.radius);
        painter.fillPath(path, QColor(QString::fromLatin1(shape.fill)));
        if (shape.stroke_width > 0) {
            painter.strokePath(path, QPen(QColor(QString::fromLatin1(shape.stroke)), shape.stroke_width));
        }
    }
    painter.end();
    return image;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 3) {
        std::cerr << "usage: samplescope_make_icon OUT.svg OUT.png\n";
        return 2;
    }
    std::ofstream file(argv[1], std::ios::binary);
    file << svg().toStdString();
    if (!file.flush()) {
        std::cerr << "samplescope_make_icon: cannot write " << argv[1] << "\n";
        return 1;
    }
    if (!png().save(QString::fromLocal8Bit(argv[2]), "PNG")) {
        std::cerr << "samplescope_make_icon: cannot write " << argv[2] << "\n";
        return 1;
    }
    return 0;
}
