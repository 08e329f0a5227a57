// The text as a reader sees it: the prompt in grey, then each written token
// in a box coloured by its probability at its step (token_colours.h) with its
// rank beside it when it was not the most probable word, a dashed outline for
// a word written by a click, and the step on show outlined. Hover a token for
// its step's numbers; click it to show that step. A last "next" slot stands
// for the word the plots are choosing now.
//
// Drawn by hand rather than as rich text in a QTextBrowser: each token needs
// a box, a rank mark and a hit area that survive wrapping, and tests need each
// token's rectangle.
#pragma once

#include <cstddef>
#include <vector>

#include <QColor>
#include <QString>
#include <QWidget>

namespace samplescope::ui {

class GeneratedTextView : public QWidget {
    Q_OBJECT
public:
    struct Piece {
        QString text;
        int node = -1;               // the tree node that wrote it; -1 for a prompt word
        bool attached = false;       // joins the word before it without a space (a sentence end)
        bool unknown = false;        // a prompt word outside the model's vocabulary
        bool clicked = false;        // written by a click
        double probability = 0.0;
        std::size_t rank = 0;        // 0: outside the kept set
        QString tooltip;             // rich text
        // A view that colours its tokens by something else than their probability
        // (where a speculative round's token came from) sets these: the box's
        // colours, the small mark in place of the rank, and an outline.
        QColor fill;                 // invalid: the probability's band
        QColor ink;
        QString mark;                // "": the rank
        bool outlined = false;
    };
    static constexpr int kNextSlot = -2;  // nodeAt()'s answer over the "next" slot

    explicit GeneratedTextView(QWidget* parent = nullptr);

    // `marked`: the node whose step is on show (outlined), -1 for none. `next`:
    // the slot's word ("" for no slot), with its tooltip.
    void setPieces(std::vector<Piece> pieces, int marked, const QString& next, const QString& next_tooltip);
    // Only the last slot's word (the pieces stay laid out as they were).
    void setNext(const QString& next, const QString& next_tooltip);
    const std::vector<Piece>& pieces() const { return pieces_; }
    int marked() const { return marked_; }
    const QString& nextText() const { return next_; }

    // The node under a point (-1 for a prompt word or nothing, kNextSlot for the slot).
    int nodeAt(const QPoint& point) const;
    QString tooltipAt(const QPoint& point) const;
    // Where a node's box or the slot is drawn (empty when it is not).
    QRect nodeRect(int node) const;
    QRect nextRect() const { return next_rect_; }

    bool hasHeightForWidth() const override { return true; }
    int heightForWidth(int width) const override;
    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

signals:
    void nodeClicked(int node);
    void nextClicked();

protected:
    bool event(QEvent* event) override;
    void paintEvent(QPaintEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;

private:
    struct Layout {
        std::vector<QRect> boxes;  // one per piece
        QRect next;
        int height = 0;
    };
    Layout layoutFor(int width) const;
    QString rankMark(const Piece& piece) const;
    int boxWidth(const Piece& piece) const;

    std::vector<Piece> pieces_;
    int marked_ = -1;
    QString next_;
    QString next_tooltip_;
    std::vector<QRect> boxes_;
    QRect next_rect_;
};

}  // namespace samplescope::ui
